package api

// mergePatch applies an RFC 7396 JSON merge patch to target in place and
// returns the result: members of patch replace those of target, a null
// removes the member (so the field takes its default when the result is
// decoded), and objects merge recursively. Arrays are replaced whole, as
// the RFC says: there is no way to edit one origin of a pool by index.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}
