// Package version holds the release this source tree is, for the
// command's --version and the audit's User-Agent, so that the two cannot
// disagree.
package version

// Version is the release this source is ("-dev" between releases).
const Version = "0.4.0-dev"
