package journal

// DecodeChunk reads chunk c of the file spec names exactly as the follower
// does: a record chunk is decoded by the file's kind (a fragment a write cut
// short becomes a Bad chunk), any other is returned as it is. It is for a
// reader other than sync that indexes the same lines the same way (the
// hub, fed by `orbit push`).
func DecodeChunk(c Chunk, spec FileSpec) (Chunk, Decoded) {
	p := decode(c, spec.Path, spec.Kind)
	return p.c, p.d
}

// FollowedKind returns the file the follower reads for a kind name.
func FollowedKind(name string) (FileSpec, bool) {
	for _, f := range Followed() {
		if f.Kind.Name() == name {
			return f, true
		}
	}
	return FileSpec{}, false
}
