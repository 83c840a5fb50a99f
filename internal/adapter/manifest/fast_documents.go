package manifest

import (
	"bytes"
	"io"
	"slices"
)

// yamlReaderBuffer is the size of the bufio.Reader apimachinery's
// YAMLReader reads through (splitYAML): it drops some of a last line
// without its line break of that size or more.
const yamlReaderBuffer = 4096

// cutYAMLDocuments returns a reader of the documents of a YAML stream,
// and about how many there are. The reader gives what utilyaml.YAMLReader
// gives — each document's lines, with a line break after the last (a
// separator line that starts a document is its first line) — as slices
// of data instead of copies. It returns nil, for YAMLReader to read data,
// when data holds a carriage return (YAMLReader drops it before line
// breaks), a separator line other than "---" with spaces, tabs or a
// comment after it (YAMLReader words the error), or a last line without
// its line break of yamlReaderBuffer bytes or more (YAMLReader, reading
// through a bufio.Reader of that size, drops some: FuzzCutYAMLDocuments).
func cutYAMLDocuments(data []byte) (next func() ([]byte, error), docs int) {
	if bytes.IndexByte(data, '\r') >= 0 || len(data)-1-bytes.LastIndexByte(data, '\n') >= yamlReaderBuffer {
		return nil, 0
	}
	// Every separator line first, for what YAMLReader would refuse.
	docs = 1
	for at := 0; at < len(data); {
		if bytes.HasPrefix(data[at:], []byte("---")) {
			line := data[at+3:]
			if i := bytes.IndexByte(line, '\n'); i >= 0 {
				line = line[:i]
			}
			if !plainSeparator(line) {
				return nil, 0
			}
			docs++
		}
		i := bytes.Index(data[at:], []byte("\n---"))
		if i < 0 {
			break
		}
		at += i + 1
	}
	pos := 0
	return func() ([]byte, error) {
		if pos >= len(data) {
			return nil, io.EOF
		}
		// A document's first line is its own, even a separator (as
		// YAMLReader reads one before any line of a document); the next
		// separator line ends it.
		rest := data[pos:]
		first := bytes.IndexByte(rest, '\n')
		if first < 0 {
			pos = len(data)
			return append(slices.Clip(rest), '\n'), nil
		}
		sep := bytes.Index(rest[first:], []byte("\n---"))
		if sep < 0 {
			pos = len(data)
			if rest[len(rest)-1] != '\n' {
				return append(slices.Clip(rest), '\n'), nil
			}
			return rest, nil
		}
		doc := rest[:first+sep+1]
		after := rest[first+sep+1:]
		if i := bytes.IndexByte(after, '\n'); i >= 0 {
			pos += len(doc) + i + 1
		} else {
			pos = len(data)
		}
		return doc, nil
	}, docs
}

// plainSeparator reports whether what follows "---" on a line is only
// spaces and tabs, then perhaps a comment.
func plainSeparator(rest []byte) bool {
	rest = bytes.TrimLeft(rest, " \t")
	return len(rest) == 0 || rest[0] == '#'
}
