package mailbox

import "io/fs"

// FileKind names the type of a file that is not a regular file, with its
// article, for messages: "a FIFO", "a socket", "a character device", "a
// block device", "a symbolic link", "a directory"; "an irregular file"
// for any other type. The readers (an input refused, an entry of a
// directory skipped) and the command (an input that rewrite refuses) word
// file types with it alike.
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}
