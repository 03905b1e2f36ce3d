package testutil

import (
	"io"
	"os"
)

// StallWriter writes N bytes to W, then makes the file Mark (so that a
// test waiting for it knows the point is reached) and blocks for ever: a
// test re-executes its binary as a child that writes through it and kills
// the child there, to see what a kill in the middle of a write leaves.
type StallWriter struct {
	W    io.Writer
	N    int
	Mark string
}

func (s *StallWriter) Write(p []byte) (int, error) {
	if len(p) > s.N {
		s.W.Write(p[:s.N])
		os.WriteFile(s.Mark, nil, 0o644)
		select {}
	}
	s.N -= len(p)
	return s.W.Write(p)
}
