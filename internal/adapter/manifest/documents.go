package manifest

import (
	"bufio"
	"bytes"
	"context"
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
// any, and its prepared form.
type document struct {
	yaml      []byte
	index     int
	blank     bool // an empty document, dropped
	data      []byte
	duplicate string
	prep      prepared
}

// splitDocuments splits a YAML stream or a JSON document into documents,
// each converted to JSON and prepared (in parallel), dropping empty ones.
// The error is the first in the input: a document that does not convert,
// or the stream's own.
func (s *Set) splitDocuments(ctx context.Context, name string, data []byte) ([]document, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		docs, err := splitJSON(name, data)
		if err != nil {
			return nil, err
		}
		// JSON needs no conversion: nothing fails here.
		if err := s.prepareDocuments(ctx, name, docs); err != nil {
			return nil, err
		}
		return docs, nil
	}
	var next func() ([]byte, error)
	n := 0 // about how many documents, when known
	if s.fast != nil {
		next, n = s.fast.yamlReader(data)
	}
	if next == nil {
		next = utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data))).Read
	}
	docs, streamErr := splitYAML(name, next, n)
	if err := s.prepareDocuments(ctx, name, docs); err != nil {
		return nil, err
	}
	if streamErr != nil {
		return nil, streamErr
	}
	return slices.DeleteFunc(docs, func(d document) bool { return d.blank }), nil
}

// splitYAML splits a YAML stream into its documents, as kubectl does
// (next is apimachinery's YAMLReader, or the fast path's reader that
// reads as it does, n about how many documents there are when known); the
// error is the stream's, after the documents read before it.
func splitYAML(name string, next func() ([]byte, error), n int) ([]document, error) {
	// The documents' bytes first, then their room at once: a document's
	// room is large, and there may be many.
	yamls := make([][]byte, 0, n)
	var err error
	for {
		var doc []byte
		if doc, err = next(); err != nil {
			break
		}
		yamls = append(yamls, doc)
	}
	docs := make([]document, len(yamls))
	for i, doc := range yamls {
		docs[i].yaml, docs[i].index = doc, i+1
	}
	if !errors.Is(err, io.EOF) {
		return docs, &InputError{Source: fmt.Sprintf("%s#%d", name, len(yamls)+1), Detail: "malformed YAML: " + oneLine(err.Error())}
	}
	return docs, nil
}

// splitJSON splits data into the JSON values it holds one after another,
// dropping nulls.
func splitJSON(name string, data []byte) ([]document, error) {
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

// prepareDocuments converts the YAML documents of docs and prepares them
// all, in parallel as a List's items are, and returns the first document
// in order that does not convert. A document's JSON is kept only where
// commit needs it to word an error.
func (s *Set) prepareDocuments(ctx context.Context, name string, docs []document) error {
	failed := make([]error, len(docs))
	s.parallelEach(ctx, len(docs), func() func(int) {
		w := s.newWorker()
		return func(i int) {
			d := &docs[i]
			if d.yaml != nil {
				data, duplicate, err := w.toJSON(d.yaml)
				if err != nil {
					// Its source worded only now: a load of many
					// documents would word one for each.
					err.Source = fmt.Sprintf("%s#%d", name, d.index)
					failed[i] = err
					return
				}
				d.yaml, d.data, d.duplicate, d.blank = nil, data, duplicate, data == nil
			}
			if d.blank {
				return
			}
			d.prep = w.prepare(d.data)
			if d.prep.decoded() {
				w.release(d.data)
				d.data = nil // commit needs the JSON only to word an error
			}
		}
	})
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}

// convertYAML converts one YAML document to JSON as sigs.k8s.io/yaml does,
// with its first duplicate key (unless duplicates is false: under
// --validate=ignore they do not matter, and the last one wins). An empty
// document has no data. Its error has no Source: the caller's to set.
func convertYAML(doc []byte, duplicates bool) (data []byte, duplicate string, _ *InputError) {
	// One parse for a document without a duplicate key; only a document
	// the strict conversion refuses is parsed again, to name the
	// duplicate field (or to find there is none).
	if duplicates {
		var err error
		if data, err = yaml.YAMLToJSONStrict(doc); err != nil {
			data, duplicate = nil, duplicateKey(doc)
		}
	}
	if data == nil {
		var err error
		if data, err = yaml.YAMLToJSON(doc); err != nil {
			return nil, "", &InputError{Detail: "malformed YAML/JSON: " + oneLine(err.Error())}
		}
	}
	if isBlank(data) {
		return nil, "", nil
	}
	return data, duplicate, nil
}

// isBlank reports whether data, a document converted to JSON, is empty.
func isBlank(data []byte) bool {
	t := bytes.TrimSpace(data)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
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
