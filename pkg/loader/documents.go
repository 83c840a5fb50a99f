package loader

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	yamlv3 "go.yaml.in/yaml/v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// document is one document as JSON, with its first duplicate key if any,
// or a large YAML List converted by parts.
type document struct {
	data      []byte
	duplicate string
	list      *convertedList
}

// splitListSize is the smallest YAML document worth cutting into items.
const splitListSize = 64 << 10

// splitDocuments splits a YAML stream or a JSON document into raw JSON
// documents, dropping empty ones. YAML turned into JSON loses duplicate
// keys, so each YAML document's first duplicate key is found first (unless
// duplicates is false: under --validate=ignore they do not matter).
func (s *Set) splitDocuments(name string, data []byte, duplicates bool) ([]document, error) {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		return splitJSON(name, data)
	}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var docs []document
	for i := 1; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, &InputError{Source: fmt.Sprintf("%s#%d", name, i), Detail: "malformed YAML: " + oneLine(err.Error())}
		}
		if len(doc) >= splitListSize {
			if l, ok := splitYAMLList(doc); ok {
				if c, ok := s.convertYAMLList(l, duplicates); ok {
					docs = append(docs, document{list: &c})
					continue
				}
			}
		}
		d, err := convertYAML(fmt.Sprintf("%s#%d", name, i), doc, duplicates)
		if err != nil {
			return nil, err
		}
		if d.data != nil {
			docs = append(docs, d)
		}
	}
	return docs, nil
}

// convertYAML converts one YAML document to JSON, with its first
// duplicate key (unless duplicates is false: under --validate=ignore they
// do not matter). An empty document has no data.
func convertYAML(src string, doc []byte, duplicates bool) (document, error) {
	// The fast conversion first (fastyaml.go; it declines duplicate keys
	// and whatever it does not read for certain). Then one generic parse
	// for a document without a duplicate key; only a document the strict
	// conversion refuses is parsed again, to name the duplicate field (or
	// to find there is none).
	var d document
	raw, fast := fastYAMLToJSON(doc)
	var err error
	if !fast && duplicates {
		if raw, err = yaml.YAMLToJSONStrict(doc); err != nil {
			d.duplicate = duplicateKey(doc)
		}
	}
	if raw == nil {
		if raw, err = yaml.YAMLToJSON(doc); err != nil {
			return document{}, &InputError{Source: src, Detail: "malformed YAML/JSON: " + oneLine(err.Error())}
		}
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
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
