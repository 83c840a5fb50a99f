package manifest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"

	yamlv3 "go.yaml.in/yaml/v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// document is one document of a stream: its YAML to convert (yaml, the
// index-th document read), then its JSON with its first duplicate key if
// any, and its prepared form; or a large YAML List converted by parts.
type document struct {
	yaml      []byte
	index     int
	blank     bool // an empty document, dropped
	data      []byte
	duplicate string
	prep      prepared
	list      *convertedList
}

// splitListSize is the smallest YAML document worth cutting into items.
const splitListSize = 64 << 10

// splitDocuments splits a YAML stream or a JSON document into documents,
// each converted to JSON and prepared (in parallel), dropping empty ones.
// YAML turned into JSON loses duplicate keys, so each YAML document's
// first duplicate key is found first (unless duplicates is false: under
// --validate=ignore they do not matter). The error is the first in the
// input: a document that does not convert, or the stream's own.
func (s *Set) splitDocuments(name string, data []byte, duplicates bool) ([]document, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		docs, err := splitJSON(name, data)
		if err != nil {
			return nil, err
		}
		// JSON needs no conversion: nothing fails here.
		if err := s.prepareDocuments(name, docs, duplicates); err != nil {
			return nil, err
		}
		return docs, nil
	}
	next, n := cutYAMLDocuments(data)
	if next == nil {
		r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		next = r.Read
	}
	docs := make([]document, 0, n)
	var streamErr error
	for i := 1; ; i++ {
		doc, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			streamErr = &InputError{Source: fmt.Sprintf("%s#%d", name, i), Detail: "malformed YAML: " + oneLine(err.Error())}
			break
		}
		if len(doc) >= splitListSize {
			if l, ok := splitYAMLList(doc); ok {
				if c, ok := s.convertYAMLList(l, duplicates); ok {
					docs = append(docs, document{list: &c})
					continue
				}
			}
		}
		docs = append(docs, document{yaml: doc, index: i})
	}
	if err := s.prepareDocuments(name, docs, duplicates); err != nil {
		return nil, err
	}
	if streamErr != nil {
		return nil, streamErr
	}
	return slices.DeleteFunc(docs, func(d document) bool { return d.blank }), nil
}

// yamlReaderBuffer is the size of the bufio.Reader YAMLReader reads through.
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

// prepareDocuments converts the YAML documents of docs and prepares them
// all, in parallel as a List's items are (a goroutine's fast converter
// and pod memo are its own), and returns the first document in order that
// does not convert. A document's JSON is kept only where commit needs it
// to word an error.
func (s *Set) prepareDocuments(name string, docs []document, duplicates bool) error {
	failed := make([]error, len(docs))
	s.parallelEach(len(docs), func() func(int) {
		scratch := yamlScratch{blocks: newYAMLBlocks()}
		prep, _ := s.preparer()
		return func(i int) {
			d := &docs[i]
			if d.yaml != nil {
				c, err := convertYAMLWith(d.yaml, duplicates, &scratch)
				if err != nil {
					// Its source worded only now: a load of many
					// documents would word one for each.
					err.Source = fmt.Sprintf("%s#%d", name, d.index)
					failed[i] = err
					return
				}
				d.yaml, d.data, d.duplicate, d.blank = nil, c.data, c.duplicate, c.data == nil
			}
			if d.blank || d.list != nil {
				return
			}
			d.prep = prep(d.data)
			if d.prep.decoded() {
				scratch.recycle(d.data)
				d.data = nil // commit needs the JSON only to word an error
			}
		}
	})
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}

// convertYAMLWith converts one YAML document to JSON, with its first
// duplicate key (unless duplicates is false: under --validate=ignore they
// do not matter), using a converting goroutine's scratch (nil allocates).
// An empty document has no data. Its error has no Source: the caller's to
// set.
func convertYAMLWith(doc []byte, duplicates bool, scratch *yamlScratch) (document, *InputError) {
	// The fast conversion first (fastyaml.go; it declines duplicate keys
	// and whatever it does not read for certain). Then one generic parse
	// for a document without a duplicate key; only a document the strict
	// conversion refuses is parsed again, to name the duplicate field (or
	// to find there is none).
	var d document
	raw, fast := fastYAMLToJSONWith(doc, scratch)
	var err error
	if !fast && duplicates {
		if raw, err = yaml.YAMLToJSONStrict(doc); err != nil {
			d.duplicate = duplicateKey(doc)
		}
	}
	if raw == nil {
		if raw, err = yaml.YAMLToJSON(doc); err != nil {
			return document{}, &InputError{Detail: "malformed YAML/JSON: " + oneLine(err.Error())}
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		scratch.recycle(raw)
		return document{}, nil
	}
	d.data = raw
	return d, nil
}

func splitJSON(name string, data []byte) ([]document, error) {
	if values, ok := splitJSONValues(data); ok {
		docs := make([]document, len(values))
		for i, v := range values {
			docs[i] = document{data: v}
		}
		return docs, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var docs []document
	for i := 1; ; i++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &InputError{Source: fmt.Sprintf("%s#%d", name, i), Detail: "malformed YAML/JSON: " + oneLine(err.Error())}
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
			continue
		}
		docs = append(docs, document{data: raw})
	}
	return docs, nil
}

// duplicateKey returns `duplicate field "a.b[0].c"` for the first mapping
// key of a YAML document given twice, or "". Aliases are not followed.
func duplicateKey(doc []byte) string {
	var root yamlv3.Node
	if yamlv3.Unmarshal(doc, &root) != nil {
		return ""
	}
	var walk func(n *yamlv3.Node, path string) string
	walk = func(n *yamlv3.Node, path string) string {
		switch n.Kind {
		case yamlv3.DocumentNode:
			for _, c := range n.Content {
				if d := walk(c, path); d != "" {
					return d
				}
			}
		case yamlv3.MappingNode:
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				key := n.Content[i].Value
				p := key
				if path != "" {
					p = path + "." + key
				}
				if n.Content[i].Tag != "!!merge" && seen[key] {
					return fmt.Sprintf("duplicate field %q", p)
				}
				seen[key] = true
				if d := walk(n.Content[i+1], p); d != "" {
					return d
				}
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				if d := walk(c, fmt.Sprintf("%s[%d]", path, i)); d != "" {
					return d
				}
			}
		}
		return ""
	}
	return walk(&root, "")
}
