package manifest

import (
	"bytes"
	"slices"
	"strings"
	"unicode/utf8"
)

// fastYAMLToJSON converts the block YAML that `kubectl get -o yaml` and
// most hand-written manifests use straight to JSON, an order of magnitude
// faster than the generic conversion (which builds a tree of interfaces
// and marshals it). It declines — returns false — for anything whose
// meaning it does not know for certain under YAML 1.1 as sigs.k8s.io/yaml
// reads it: anchors, aliases, tags, comments, flow collections over
// several lines or holding what appendFlow does not read, folded or kept
// block scalars, multi-line plain scalars, escapes in double quotes,
// scalars that could be numbers, booleans, timestamps or nulls in another
// spelling, and duplicate keys. The caller then converts the document the
// generic way, which gives the same answer or words the error.
// FuzzFastYAML holds it to that.
func fastYAMLToJSON(doc []byte) ([]byte, bool) {
	return fastYAMLToJSONWith(doc, nil)
}

// yamlScratch is memory fastYAMLToJSONWith reuses from one document to
// the next: a converting goroutine holds one.
type yamlScratch struct {
	lines  []yamlLine
	keys   [][]byte
	starts []int
	sorted []byte
	order  []int
	// out is a JSON buffer handed back with recycle once the document
	// converted into it is no longer needed.
	out []byte
}

// recycle hands back the JSON fastYAMLToJSONWith returned, for the next
// document (nothing may hold it any longer).
func (s *yamlScratch) recycle(out []byte) {
	if s != nil && cap(out) > cap(s.out) {
		s.out = out[:0]
	}
}

// fastYAMLToJSONWith is fastYAMLToJSON cutting the lines into scratch's
// (nil allocates them).
func fastYAMLToJSONWith(doc []byte, scratch *yamlScratch) ([]byte, bool) {
	if len(doc) > 0 && doc[len(doc)-1] != '\n' {
		// A literal block scalar's final line break is the input's.
		return nil, false
	}
	lines := scratch.split(doc)
	if lines == nil {
		return nil, false
	}
	return convertYAMLLines(lines, len(doc), scratch)
}

// split cuts doc into lines (splitYAMLLines) in the scratch's memory,
// which it keeps for the next document; s may be nil.
func (s *yamlScratch) split(doc []byte) []yamlLine {
	if s == nil {
		return splitYAMLLines(doc, nil)
	}
	lines := splitYAMLLines(doc, s.lines[:0])
	if lines != nil {
		s.lines = lines
	}
	return lines
}

// convertYAMLLines converts the lines of a document of size bytes.
func convertYAMLLines(lines []yamlLine, size int, scratch *yamlScratch) ([]byte, bool) {
	p := yamlParser{lines: lines}
	if scratch != nil {
		p.keys, p.starts, p.sorted, p.order = scratch.keys[:0], scratch.starts[:0], scratch.sorted, scratch.order
		defer func() {
			scratch.keys, scratch.starts, scratch.sorted, scratch.order = p.keys[:0], p.starts[:0], p.sorted, p.order
		}()
	}
	p.skipBlank()
	if p.i == len(p.lines) {
		return []byte("null"), true
	}
	if size += size / 4; scratch != nil && cap(scratch.out) >= size {
		p.out, scratch.out = scratch.out[:0], nil
	} else {
		p.out = make([]byte, 0, size)
	}
	if !p.node(p.lines[p.i].indent) {
		return nil, false
	}
	p.skipBlank()
	if p.i != len(p.lines) {
		return nil, false
	}
	return p.out, true
}

// yamlLine is a line of a document: its indentation and what follows.
type yamlLine struct {
	indent  int
	content []byte // without indentation and trailing space
	raw     []byte // without the line break
}

// splitYAMLLines cuts doc into lines, or returns nil for what the parser
// does not read (tabs in indentation, line breaks other than \n and \r\n,
// invalid UTF-8, directives and document markers).
func splitYAMLLines(doc []byte, lines []yamlLine) []yamlLine {
	if !utf8.Valid(doc) || !printable(doc) {
		return nil
	}
	if lines == nil {
		lines = make([]yamlLine, 0, bytes.Count(doc, []byte("\n"))+1)
	}
	crlf := bytes.IndexByte(doc, '\r') >= 0
	for len(doc) > 0 {
		raw := doc
		if i := bytes.IndexByte(doc, '\n'); i >= 0 {
			raw, doc = doc[:i], doc[i+1:]
		} else {
			doc = nil
		}
		if crlf {
			raw = bytes.TrimSuffix(raw, []byte("\r"))
			if bytes.IndexByte(raw, '\r') >= 0 {
				return nil
			}
		}
		indent := indentOf(raw)
		content := bytes.TrimRight(raw[indent:], " ")
		if len(content) > 0 && (content[0] == '\t' || content[len(content)-1] == '\t') {
			return nil // YAML trims a tab at a line's end, except in a block scalar
		}
		if indent == 0 && len(raw) > 0 && (raw[0] == '-' || raw[0] == '.' || raw[0] == '%') &&
			(bytes.HasPrefix(raw, []byte("---")) || bytes.HasPrefix(raw, []byte("...")) || raw[0] == '%') {
			return nil
		}
		lines = append(lines, yamlLine{indent: indent, content: content, raw: raw})
	}
	return lines
}

// indentOf returns how many spaces line starts with.
func indentOf(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

type yamlParser struct {
	lines []yamlLine
	i     int
	out   []byte
	// keys are the keys of the mappings being converted, innermost last,
	// and starts where their members start in out; sorted and order are
	// room for sortMembers.
	keys   [][]byte
	starts []int
	sorted []byte
	order  []int
}

func (p *yamlParser) skipBlank() {
	for p.i < len(p.lines) && len(p.lines[p.i].content) == 0 {
		p.i++
	}
}

// node converts the block node whose first line is p.i, at indent.
func (p *yamlParser) node(indent int) bool {
	l := p.lines[p.i]
	if l.indent != indent {
		return false
	}
	if isSeqEntry(l.content) {
		return p.sequence(indent)
	}
	return p.mapping(indent)
}

func isSeqEntry(content []byte) bool {
	return len(content) > 0 && content[0] == '-' && (len(content) == 1 || content[1] == ' ')
}

// mapping converts the block mapping at p.i, whose keys are at indent.
func (p *yamlParser) mapping(indent int) bool {
	open := len(p.out)
	p.out = append(p.out, '{')
	// This mapping's keys are p.keys[base:], for duplicates, and where
	// each member starts in p.out p.starts[base:].
	base := len(p.keys)
	defer func() { p.keys, p.starts = p.keys[:base], p.starts[:base] }()
	inOrder := true
	first := true
	for {
		p.skipBlank()
		if p.i == len(p.lines) {
			break
		}
		l := p.lines[p.i]
		if l.indent < indent || l.indent == indent && isSeqEntry(l.content) {
			break
		}
		if l.indent > indent {
			return false
		}
		key, rest, ok := splitKey(l.content)
		if !ok {
			return false
		}
		for _, k := range p.keys[base:] {
			if bytes.Equal(k, key) {
				return false // a duplicate: the generic path names it
			}
		}
		if len(p.keys) > base && bytes.Compare(p.keys[len(p.keys)-1], key) > 0 {
			inOrder = false
		}
		p.keys = append(p.keys, key)
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		p.starts = append(p.starts, len(p.out))
		p.out = appendJSONString(p.out, key)
		p.out = append(p.out, ':')
		p.i++
		if !p.value(indent, rest, true) {
			return false
		}
	}
	if !inOrder {
		p.order = orderBytes(p.keys[base:], p.order)
		p.out, p.sorted = sortMembers(p.out, open, p.starts[base:], p.order, p.sorted)
	}
	p.out = append(p.out, '}')
	return true
}

// sortMembers puts the members of the JSON object out[open:] (its closing
// brace not yet written), which start at starts, in order (of their keys:
// orderBytes, orderStrings), as sigs.k8s.io/yaml writes them (through a
// map, which encoding/json writes in key order); the generic converter's
// JSON and the fast converter's then decode alike, problems and all.
// scratch is room it may use, which it returns.
func sortMembers(out []byte, open int, starts, order []int, scratch []byte) ([]byte, []byte) {
	sorted := scratch[:0]
	for i, m := range order {
		if i > 0 {
			sorted = append(sorted, ',')
		}
		end := len(out)
		if m+1 < len(starts) {
			end = starts[m+1] - 1 // the comma
		}
		sorted = append(sorted, out[starts[m]:end]...)
	}
	return append(out[:open+1], sorted...), sorted
}

// orderBytes returns, in order (room it may use), the indexes of keys in
// the order of the keys.
func orderBytes(keys [][]byte, order []int) []int {
	order = indexes(len(keys), order)
	slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(keys[a], keys[b]) })
	return order
}

// indexes returns 0 to n-1 in order's room.
func indexes(n int, order []int) []int {
	order = order[:0]
	for i := range n {
		order = append(order, i)
	}
	return order
}

// value converts the value of a key (or of a sequence entry) at indent
// whose rest of line is rest: inline, a block scalar, or a nested block
// on the following lines.
func (p *yamlParser) value(indent int, rest []byte, inMapping bool) bool {
	if len(rest) > 0 {
		if rest[0] == '|' {
			return p.literal(indent, rest)
		}
		return p.scalar(rest)
	}
	p.skipBlank()
	return p.nested(indent, inMapping)
}

// nested converts the nested block at p.i of a key (or sequence entry) at
// indent, or null when there is none.
func (p *yamlParser) nested(indent int, inMapping bool) bool {
	if p.i < len(p.lines) {
		next := p.lines[p.i]
		if next.indent > indent {
			return p.node(next.indent)
		}
		// kubectl writes a mapping's sequence at the key's indentation.
		if inMapping && next.indent == indent && isSeqEntry(next.content) {
			return p.sequence(indent)
		}
	}
	p.out = append(p.out, "null"...)
	return true
}

// sequence converts the block sequence at p.i, whose entries are at
// indent.
func (p *yamlParser) sequence(indent int) bool {
	p.out = append(p.out, '[')
	first := true
	for {
		p.skipBlank()
		if p.i == len(p.lines) {
			break
		}
		l := p.lines[p.i]
		if l.indent != indent || !isSeqEntry(l.content) {
			if l.indent > indent {
				return false
			}
			break
		}
		if !first {
			p.out = append(p.out, ',')
		}
		first = false
		entry := bytes.TrimLeft(l.content[1:], " ")
		switch {
		case len(entry) == 0:
			p.i++
			if !p.value(indent, nil, false) {
				return false
			}
		case startsWithKey(entry) || entry[0] == '"' && bytes.Contains(entry, []byte(`": `)):
			// "- key: value": a mapping whose keys are where key is.
			at := indent + (len(l.content) - len(entry))
			p.lines[p.i] = yamlLine{indent: at, content: entry, raw: l.raw}
			if !p.mapping(at) {
				return false
			}
		case isSeqEntry(entry) || entry[0] == '|':
			return false
		default:
			p.i++
			if !p.scalar(entry) {
				return false
			}
		}
	}
	p.out = append(p.out, ']')
	return true
}

// maxKeyLen bounds the keys the converter reads: YAML takes a key without
// "? " only up to 1,024 characters, which the generic converter enforces
// (and words); the converter leaves a longer key, and one of more than
// maxKeyLen bytes, to it.
const maxKeyLen = 512

// splitKey splits "key: rest" or "key:" into the key and the rest.
func splitKey(content []byte) (key, rest []byte, ok bool) {
	if content[0] == '"' || content[0] == '\'' {
		end := bytes.IndexByte(content[1:], content[0])
		if end < 0 || end+2 > maxKeyLen {
			return nil, nil, false
		}
		k, ok := quoted(content[:end+2])
		if !ok || end+2 >= len(content) || content[end+2] != ':' {
			return nil, nil, false
		}
		rest = content[end+3:]
		if len(rest) > 0 && rest[0] != ' ' {
			return nil, nil, false
		}
		return k, bytes.TrimLeft(rest, " "), true
	}
	i := colonSpace(content)
	if i < 0 {
		if content[len(content)-1] != ':' {
			return nil, nil, false
		}
		i = len(content) - 1
	}
	k := content[:i]
	if len(k) == 0 || len(k) > maxKeyLen || isYAMLWhite(k[len(k)-1]) || !isPlainString(k) {
		return nil, nil, false
	}
	if i+1 < len(content) {
		rest = bytes.TrimLeft(content[i+2:], " ")
	}
	return k, rest, true
}

// scalar converts an inline scalar; p.i is the line after it.
func (p *yamlParser) scalar(s []byte) bool {
	// A scalar on one line: a more indented line after it would continue
	// it (or be an error).
	if p.i < len(p.lines) {
		if next := p.lines[p.i]; len(next.content) > 0 && next.indent > p.lines[p.i-1].indent {
			return false
		}
	}
	switch s[0] {
	case '"', '\'':
		v, ok := quoted(s)
		if !ok {
			return false
		}
		p.out = appendJSONString(p.out, v)
		return true
	case '{', '[':
		var ok bool
		p.out, s, ok = appendFlow(p.out, s, 0)
		return ok && len(s) == 0
	}
	switch string(s) {
	case "true", "false", "null":
		p.out = append(p.out, s...)
		return true
	case "~":
		p.out = append(p.out, "null"...)
		return true
	}
	if yamlInt(s) {
		p.out = append(p.out, s...)
		return true
	}
	if !isPlainString(s) {
		return false
	}
	p.out = appendJSONString(p.out, s)
	return true
}

// literal converts a "|" or "|-" block scalar whose key is at indent.
func (p *yamlParser) literal(indent int, header []byte) bool {
	clip := false // "|" keeps one final line break, "|-" none
	switch string(header) {
	case "|":
		clip = true
	case "|-":
	default:
		return false
	}
	if p.i >= len(p.lines) || len(p.lines[p.i].content) == 0 {
		return false // leading empty lines: indentation rules we do not follow
	}
	at := p.lines[p.i].indent
	if at <= indent {
		return false
	}
	var b strings.Builder
	trailing := 0
	for p.i < len(p.lines) {
		l := p.lines[p.i]
		if len(l.content) == 0 {
			if len(l.raw) > at {
				return false // spaces beyond the indentation on an empty line
			}
			trailing++
			p.i++
			continue
		}
		if l.indent < at {
			break
		}
		for range trailing {
			b.WriteByte('\n')
		}
		trailing = 0
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.Write(l.raw[at:])
		p.i++
	}
	if clip {
		b.WriteByte('\n')
	}
	p.out = appendJSONString(p.out, b.String())
	return true
}

// maxFlowDepth bounds how deeply appendFlow nests: deeper flows decline
// (to the generic converter, which has bounds of its own).
const maxFlowDepth = 32

// appendFlow converts the flow collection at the start of s — a mapping
// {k: v, ...} or a sequence [v, ...] on one line, whose keys and scalars
// are quoted or single plain words, with no trailing comma, no implicit
// key in a sequence and no duplicate key — and returns what follows it.
// ok is false for anything else.
func appendFlow(out, s []byte, depth int) (_, rest []byte, ok bool) {
	if depth >= maxFlowDepth {
		return out, s, false
	}
	open := s[0]
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	out = append(out, open)
	s = trimFlowSpace(s[1:])
	if len(s) > 0 && s[0] == end {
		return append(out, end), s[1:], true
	}
	start := len(out) - 1
	// A flow mapping has few keys: room for them on the stack.
	var keysRoom [8][]byte
	var startsRoom [8]int
	keys, starts := keysRoom[:0], startsRoom[:0]
	inOrder := true
	for {
		if len(s) == 0 {
			return out, s, false
		}
		if open == '{' {
			var key []byte
			if key, s, ok = flowKey(s); !ok || slices.ContainsFunc(keys, func(k []byte) bool { return bytes.Equal(k, key) }) {
				return out, s, false
			}
			if len(keys) > 0 && bytes.Compare(keys[len(keys)-1], key) > 0 {
				inOrder = false
			}
			keys = append(keys, key)
			starts = append(starts, len(out))
			out = appendJSONString(out, key)
			out = append(out, ':')
		}
		if out, s, ok = appendFlowNode(out, s, depth); !ok {
			return out, s, false
		}
		s = trimFlowSpace(s)
		if len(s) == 0 {
			return out, s, false
		}
		switch s[0] {
		case end:
			if !inOrder {
				var orderRoom [8]int
				out, _ = sortMembers(out, start, starts, orderBytes(keys, orderRoom[:0]), nil)
			}
			return append(out, end), s[1:], true
		case ',':
			s = trimFlowSpace(s[1:])
			if len(s) == 0 || s[0] == end {
				return out, s, false // a trailing comma
			}
			out = append(out, ',')
		default:
			return out, s, false // ':' after a sequence entry, or more words
		}
	}
}

// flowKey reads "key: " at the start of s (a quoted or plain key, then a
// colon and a space) and returns the key and what follows.
func flowKey(s []byte) (key, rest []byte, ok bool) {
	tok, rest, ok := flowToken(s)
	if !ok || len(tok) > maxKeyLen || len(rest) < 2 || rest[0] != ':' || rest[1] != ' ' {
		return nil, s, false
	}
	if tok[0] == '"' || tok[0] == '\'' {
		key, ok = quoted(tok)
	} else {
		key, ok = tok, isPlainString(tok)
	}
	return key, trimFlowSpace(rest[1:]), ok
}

// appendFlowNode converts a flow collection or a scalar at the start of s.
func appendFlowNode(out, s []byte, depth int) (_, rest []byte, ok bool) {
	if s[0] == '{' || s[0] == '[' {
		return appendFlow(out, s, depth+1)
	}
	tok, rest, ok := flowToken(s)
	if !ok {
		return out, s, false
	}
	switch tok[0] {
	case '"', '\'':
		v, ok := quoted(tok)
		return appendJSONString(out, v), rest, ok
	}
	switch string(tok) {
	case "true", "false", "null":
		return append(out, tok...), rest, true
	case "~":
		return append(out, "null"...), rest, true
	}
	if yamlInt(tok) {
		return append(out, tok...), rest, true
	}
	return appendJSONString(out, tok), rest, isPlainString(tok)
}

// flowToken cuts a quoted scalar, or a plain word (up to a space, a flow
// indicator, a colon or a quote), from the start of s.
func flowToken(s []byte) (tok, rest []byte, ok bool) {
	switch q := s[0]; q {
	case '"':
		i := bytes.IndexByte(s[1:], '"')
		if i < 0 {
			return nil, s, false
		}
		return s[:i+2], s[i+2:], true
	case '\'':
		for i := 1; i < len(s); i++ {
			if s[i] != '\'' {
				continue
			}
			if i+1 < len(s) && s[i+1] == '\'' {
				i++
				continue
			}
			return s[:i+1], s[i+1:], true
		}
		return nil, s, false
	}
	i := bytes.IndexAny(s, " ,[]{}:\"'#")
	if i < 0 {
		i = len(s)
	}
	// A flow scalar holding a "?" is left to the generic converter, which
	// refuses some (FuzzFastYAML: "[0?]"), and one holding a tab, which
	// it trims ("[0\t]" is [0]).
	return s[:i], s[i:], i > 0 && bytes.IndexAny(s[:i], "?\t") < 0
}

// trimFlowSpace drops the spaces at the start of s.
func trimFlowSpace(s []byte) []byte { return bytes.TrimLeft(s, " ") }

// colonSpace is bytes.Index(s, []byte(": ")), for short lines.
func colonSpace(s []byte) int {
	for i := 0; ; {
		j := bytes.IndexByte(s[i:], ':')
		if j < 0 {
			return -1
		}
		i += j
		if i+1 < len(s) && s[i+1] == ' ' {
			return i
		}
		i++
	}
}
