package manifest

import (
	"bytes"
)

// A YAML List as `kubectl get -o yaml` writes it is one document of tens
// of megabytes: converting it to JSON in one piece is the slowest part of a
// load, and cannot use more than one core. splitYAMLList cuts such a
// document into its items by their lines (each item starts with "- " in
// the first column), so that the items are converted one by one, in
// parallel. Anything it does not recognise — an indented sequence, a
// comment or a tab in the first column, an item that does not convert on
// its own (an alias to another item's anchor) — sends the document
// through the whole-document conversion instead, which gives the same
// result or words the error.

// yamlList is a YAML List document cut into the List without its items
// and each item, all still YAML.
type yamlList struct {
	rest  []byte
	items [][]byte
}

// splitYAMLList cuts doc into a yamlList, or returns false.
func splitYAMLList(doc []byte) (yamlList, bool) {
	var l yamlList
	c := yamlListCutter{item: func(item []byte) { l.items = append(l.items, item) }}
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i+1], doc[i+1:]
		} else {
			doc = nil
		}
		if !c.line(line) {
			return yamlList{}, false
		}
	}
	rest, ok := c.end()
	if !ok || len(l.items) == 0 {
		return yamlList{}, false
	}
	l.rest = rest
	return l, true
}

// yamlListCutter cuts a YAML List into its items line by line, for
// splitYAMLList and for the streaming reader (stream.go): each line is
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

// convertedList is a YAML List converted to JSON: the List with
// "items": null, and each item.
type convertedList struct {
	rest   []byte
	header objectHeader
	items  [][]byte
}

// convertYAMLList converts the parts of l to JSON in parallel (dropping
// l's YAML as it goes), or returns false when one does not convert on its
// own or l is not a List. With duplicates, a
// duplicate key anywhere also returns false: the whole document's
// conversion then names the first one, as it appears in the document.
func (s *Set) convertYAMLList(l yamlList, duplicates bool) (convertedList, bool) {
	c := convertedList{items: make([][]byte, len(l.items))}
	var ok bool
	if c.rest, ok = convertYAMLItem(l.rest, duplicates, nil); !ok {
		return convertedList{}, false
	}
	// Only a List is read by parts (anything else with an items key is
	// converted whole, and refused or skipped as it would be then).
	h, ok := scanHeader(c.rest)
	if !ok || !isListKind(h.Kind) || h.APIVersion == "" {
		return convertedList{}, false
	}
	c.header = h.short()
	failed := make([]bool, len(l.items))
	s.parallelEach(len(l.items), func() func(int) {
		// A goroutine's own line buffer and block memo; its output is
		// kept, so never recycled.
		scratch := yamlScratch{blocks: newYAMLBlocks()}
		return func(i int) {
			var ok bool
			if c.items[i], ok = convertYAMLItem(l.items[i], duplicates, &scratch); !ok {
				failed[i] = true
			}
			l.items[i] = nil // the YAML is no longer needed
		}
	})
	for _, f := range failed {
		if f {
			return convertedList{}, false
		}
	}
	return c, true
}

// addConvertedList adds a List converted by parts, as addList adds one
// converted whole.
func (s *Set) addConvertedList(src string, c convertedList) error {
	return s.addItems(src, c.rest, c.header, c.items, 0)
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
