package pools

// Canonicalize puts o's names into the form the stores keep (lower case,
// no trailing dot, a prefix in its shortest form, lists never null), so
// that a client comparing its own copy with a stored one sees only real
// differences.
func Canonicalize(o Object) { canonicalize(o) }
