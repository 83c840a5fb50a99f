package manifest

import (
	"bytes"
)

// A YAML List as `kubectl get -o yaml` writes it is one document of tens
// of megabytes or more: converting it to JSON in one piece is the slowest
// part of a load, and cannot use more than one core. The streaming reader
// (fast_stream.go) cuts such a document into its items by their lines
// (each item starts with "- " in the first column), so that the items are
// converted one by one, in parallel. Anything the cutter does not
// recognise — an indented sequence, a comment or a tab in the first
// column — declines the document, for the general path to convert whole.

// yamlListCutter cuts a YAML List into its items line by line, for the
// streaming reader (fast_stream.go): each line is
// given to line, which returns false when the document is not one it cuts;
// each item is given to item as soon as it is complete; end returns the
// List without its items, or false.
type yamlListCutter struct {
	item    func(item []byte)
	rest    []byte
	inItems bool
	cur     []byte // the item being cut, nil between items
	found   bool
	last    int // the size of the last item, to size the next
}

// line takes the next line of the document, with its line break.
func (c *yamlListCutter) line(line []byte) bool {
	// Line breaks other than \n and \r\n (NEL, LS, PS; a lone \r is
	// checked below) are breaks to YAML too, but not to the line cutter;
	// printable refuses them, as the fast converter does.
	if !printable(line) {
		return false
	}
	content := bytes.TrimRight(line, " \r\n")
	if bytes.IndexByte(content, '\r') >= 0 {
		return false
	}
	switch {
	case len(content) == 0:
		if c.cur != nil {
			c.cur = append(c.cur, line...)
		}
	case line[0] == '#' || line[0] == '\t' || line[0] == '%':
		return false
	case c.inItems && bytes.HasPrefix(line, []byte("- ")):
		// Only an item that is a block mapping ("- key: value") reads the
		// same on its own as inside the sequence.
		if !startsWithKey(line[2:]) {
			return false
		}
		c.flush()
		c.cur = make([]byte, 0, max(256, c.last+c.last/8))
		c.cur = append(c.cur, "  "...)
		c.cur = append(c.cur, line[2:]...)
	case line[0] == ' ':
		if c.cur == nil {
			if c.inItems || len(c.rest) == 0 {
				return false // an indented sequence or root
			}
			c.rest = append(c.rest, line...)
			return true
		}
		if !bytes.HasPrefix(line, []byte("  ")) {
			return false
		}
		c.cur = append(c.cur, line...)
	case line[0] == '-':
		return false
	default:
		// A key in the first column ends the items.
		if !startsWithKey(line) {
			return false
		}
		c.flush()
		c.inItems = false
		if string(content) == "items:" {
			if c.found {
				return false
			}
			c.inItems, c.found = true, true
		}
		c.rest = append(c.rest, line...)
	}
	return true
}

// flush hands the item being cut to item.
func (c *yamlListCutter) flush() {
	if c.cur != nil {
		c.last = len(c.cur)
		c.item(c.cur)
		c.cur = nil
	}
}

// end completes the last item and returns the List without its items,
// or false when the document had no items key.
func (c *yamlListCutter) end() ([]byte, bool) {
	c.flush()
	return c.rest, c.found
}

// startsWithKey reports whether line starts with a plain mapping key and
// its colon, as in "apiVersion: v1" or "metadata:".
func startsWithKey(line []byte) bool {
	for i, c := range line {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '.' || c == '/'):
		case i > 0 && c == ':':
			return i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\n' || line[i+1] == '\r'
		default:
			return false
		}
	}
	return false
}
