package dnssec

// Slots is the cache's capacity in signatures.
func (c *Cache) Slots() int { return len(c.slots) }
