package mailbox

import "bytes"

// binaryMagic are the first bytes of file types that hold no mail: a
// folder of mail may hold them beside the messages (saved attachments).
var binaryMagic = []struct {
	what  string
	magic string
}{
	{"PNG image", "\x89PNG\r\n\x1a\n"},
	{"JPEG image", "\xff\xd8\xff"},
	{"GIF image", "GIF87a"},
	{"GIF image", "GIF89a"},
	{"TIFF image", "II*\x00"},
	{"TIFF image", "MM\x00*"},
	{"WebP image, WAV audio or AVI video (RIFF)", "RIFF"},
	{"MP3 audio", "ID3"},
	{"Ogg audio or video", "OggS"},
	{"FLAC audio", "fLaC"},
	{"MIDI audio", "MThd"},
	{"PDF document", "%PDF-"},
	{"PostScript document", "%!PS"},
	{"ZIP archive (or an Office document)", "PK\x03\x04"},
	{"7-Zip archive", "7z\xbc\xaf\x27\x1c"},
	{"RAR archive", "Rar!\x1a\x07"},
	{"ELF executable", "\x7fELF"},
	{"Java class or Mach-O binary", "\xca\xfe\xba\xbe"},
	{"SQLite database", "SQLite format 3\x00"},
	{"Windows icon", "\x00\x00\x01\x00"},
	{"Windows executable", "MZ"},
}

// unreadFormat tells, from the first bytes of a file found in a
// directory, why it is not read as mail: a binary file (why, nil), or a
// format of mail that this package does not read (why, ErrUnsupported),
// where why says how to read it. It returns "", nil for a file to read;
// compressed files are read.
func unreadFormat(head []byte, path string) (string, error) {
	switch {
	case bytes.HasPrefix(head, []byte("CRMT")):
		return "an INN timecaf file (CAF: many articles in one file): export its articles with INN's own tools, e.g. sm(1) with the tokens of the history file, and read the result", ErrUnsupported
	case len(head) >= 5 && bytes.HasPrefix(head, []byte("CBuf")) && head[4] >= '1' && head[4] <= '9':
		return "an INN CNFS cyclic buffer: export its articles with INN's own tools, e.g. sm(1) with the tokens of the history file, and read the result", ErrUnsupported
	case bytes.HasPrefix(head, []byte("\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1")):
		return "an OLE compound file (an Outlook .msg or an old Office document): save the messages as .eml or mbox to read them", ErrUnsupported
	case compressedMagic(head):
		return "", nil
	}
	for _, b := range binaryMagic {
		if bytes.HasPrefix(head, []byte(b.magic)) {
			if b.magic == "MZ" && bytes.IndexByte(head, 0) < 0 {
				continue // "MZ" may begin a line of text
			}
			return "binary file (" + b.what + ")", nil
		}
	}
	if isPNM(head) {
		return "binary file (PBM, PGM or PPM image)", nil
	}
	if len(head) >= 8 && string(head[4:8]) == "ftyp" {
		return "binary file (MP4 or QuickTime video or audio)", nil
	}
	if bytes.IndexByte(head, 0) >= 0 {
		return "binary file (NUL bytes)", nil
	}
	return "", nil
}

// isPNM reports whether head starts a binary Netpbm image: "P4", "P5" or
// "P6", white space, then its width as digits.
func isPNM(head []byte) bool {
	if len(head) < 4 || head[0] != 'P' || head[1] < '4' || head[1] > '6' {
		return false
	}
	i := 2
	for i < len(head) && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t') {
		i++
	}
	return i > 2 && i < len(head) && head[i] >= '0' && head[i] <= '9'
}

// skipFormat is unreadFormat for a file of a directory, but a file whose
// first bytes are mail (an mbox "From " line, MMDF's ^A^A^A^A, a mail
// header, an .emlx count line) is read whatever NUL bytes follow: a NUL
// in mail is damage (an 8-bit or binary part, UTF-16 text, a broken
// mailer), not a sign of an image.
func skipFormat(head []byte, path string) (string, error) {
	why, err := unreadFormat(head, path)
	if why != "" && err == nil && isMailHead(head) {
		return "", nil
	}
	return why, err
}

// isMailHead reports whether head, the first bytes of a file, is
// detected as mail: an mbox, MMDF, a single message or an .emlx.
func isMailHead(head []byte) bool {
	switch f, _ := sniff(bytes.TrimPrefix(head, utf8BOM)); f {
	case FormatMbox, FormatMMDF, FormatMessage:
		return true
	}
	_, _, emlx := emlxHead(head)
	return emlx
}
