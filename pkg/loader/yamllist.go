package loader

import (
	"bytes"

	"sigs.k8s.io/yaml"
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
	// Line breaks other than \n and \r\n (NEL, LS, PS; a lone \r is
	// checked per line below) are breaks to YAML too, but not to the line
	// cutter; printable refuses them, as the fast converter does.
	if !printable(doc) {
		return yamlList{}, false
	}
	var (
		l       yamlList
		rest    bytes.Buffer
		inItems bool
		item    *bytes.Buffer
		found   bool
	)
	flush := func() {
		if item != nil {
			l.items = append(l.items, item.Bytes())
			item = nil
		}
	}
	for len(doc) > 0 {
		line := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i+1], doc[i+1:]
		} else {
			doc = nil
		}
		content := bytes.TrimRight(line, " \r\n")
		if bytes.IndexByte(content, '\r') >= 0 {
			return yamlList{}, false
		}
		switch {
		case len(content) == 0:
			if item != nil {
				item.Write(line)
			}
		case line[0] == '#' || line[0] == '\t' || line[0] == '%':
			return yamlList{}, false
		case inItems && bytes.HasPrefix(line, []byte("- ")):
			// Only an item that is a block mapping ("- key: value")
			// reads the same on its own as inside the sequence.
			if !startsWithKey(line[2:]) {
				return yamlList{}, false
			}
			flush()
			item = &bytes.Buffer{}
			item.WriteString("  ")
			item.Write(line[min(2, len(line)):])
		case line[0] == ' ':
			if item == nil {
				if inItems || rest.Len() == 0 {
					return yamlList{}, false // an indented sequence or root
				}
				rest.Write(line)
				continue
			}
			if !bytes.HasPrefix(line, []byte("  ")) {
				return yamlList{}, false
			}
			item.Write(line)
		case line[0] == '-':
			return yamlList{}, false
		default:
			// A key in the first column ends the items.
			if !startsWithKey(line) {
				return yamlList{}, false
			}
			flush()
			inItems = false
			if string(content) == "items:" {
				if found {
					return yamlList{}, false
				}
				inItems, found = true, true
			}
			rest.Write(line)
		}
	}
	flush()
	if !found || len(l.items) == 0 {
		return yamlList{}, false
	}
	l.rest = rest.Bytes()
	return l, true
}

// convertedList is a YAML List converted to JSON: the List with
// "items": null, and each item.
type convertedList struct {
	rest   []byte
	header header
	items  [][]byte
}

// convertYAMLList converts the parts of l to JSON in parallel (dropping
// l's YAML as it goes), or returns false when one does not convert on its
// own or l is not a List. With duplicates, a
// duplicate key anywhere also returns false: the whole document's
// conversion then names the first one, as it appears in the document.
func (s *Set) convertYAMLList(l yamlList, duplicates bool) (convertedList, bool) {
	c := convertedList{items: make([][]byte, len(l.items))}
	convert := func(doc []byte) ([]byte, bool) {
		if raw, ok := fastYAMLToJSON(doc); ok {
			return raw, true
		}
		toJSON := yaml.YAMLToJSON
		if duplicates {
			toJSON = yaml.YAMLToJSONStrict
		}
		raw, err := toJSON(doc)
		return raw, err == nil
	}
	var ok bool
	if c.rest, ok = convert(l.rest); !ok {
		return convertedList{}, false
	}
	// Only a List is read by parts (anything else with an items key is
	// converted whole, and refused or skipped as it would be then).
	if c.header, ok = scanHeader(c.rest); !ok || !isListKind(c.header.Kind) || c.header.APIVersion == "" {
		return convertedList{}, false
	}
	failed := make([]bool, len(l.items))
	s.parallel(len(l.items), func(i int) {
		var ok bool
		if c.items[i], ok = convert(l.items[i]); !ok || !bytes.HasPrefix(c.items[i], []byte("{")) {
			failed[i] = true
		}
		l.items[i] = nil // the YAML is no longer needed

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
