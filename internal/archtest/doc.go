// Package archtest holds a test, and nothing else, that checks
// docs/architecture.md against the code: the layers of packages and the
// imports each package is said to have are compared with what go list
// reports, so that the map stays true as packages and imports change.
package archtest
