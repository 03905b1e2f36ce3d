// Package archtest holds tests, and nothing else, that hold the tree to
// its written rules: docs/architecture.md's layers of packages and the
// imports each package is said to have are compared with what go list
// reports, so that the map stays true as packages and imports change;
// and no comment, doc or script names a review id or a path of the
// development machine.
package archtest
