package whatif

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/reprieve/reprieve/internal/adapter/manifest"
	"github.com/reprieve/reprieve/internal/cli/clierr"
	"github.com/reprieve/reprieve/internal/cli/completion"
	"github.com/reprieve/reprieve/internal/cli/output"
)

// NewSnapshotCommand returns the snapshot command writing to out and
// errOut: the cluster whatif would read, written once as a single list
// that `whatif --snapshot` reads back.
func NewSnapshotCommand(out, errOut io.Writer) *cobra.Command {
	o := &Options{out: out, errOut: errOut}
	cmd := &cobra.Command{
		Use:   "snapshot [--snapshot PATH... | --kubeconfig FILE] [-o json|yaml|name|jsonpath=...|go-template=...] > cluster.json",
		Short: "Write the cluster whatif reads (live or files) to one file that whatif --snapshot reads back",
		Long: `snapshot lists a live cluster (read-only) or reads manifests, keeps the kinds
whatif and simulate use, drops managed fields, and writes them as one
kind: List, so that repeated what-ifs on a big cluster pay for the listing
once. JSON (the default) is the fastest for whatif to read back.`,
		Example: `  reprieve snapshot --kubeconfig ~/.kube/config > cluster.json
  reprieve whatif --snapshot cluster.json -f pod.yaml
  reprieve snapshot --snapshot examples/cluster -o name`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.in = cmd.InOrStdin()
			v, err := manifest.ParseFieldValidation(o.FieldValidation)
			if err != nil {
				return clierr.Usagef("%v", err)
			}
			o.load = manifest.Options{Validation: v, Stdin: o.in}
			// Budgets without a status are given one as of now.
			o.now = time.Now()
			if len(o.Snapshots) > 0 && o.Kube.Live() {
				return clierr.Usagef("--snapshot and --kubeconfig/--context/--server are exclusive: read a snapshot or a live cluster")
			}
			if o.format, err = output.ParseStrict(o.Output, o.AllowMissingKeys, SnapshotKinds()...); err != nil {
				return err
			}
			return o.writeSnapshot(cmd.Context())
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.Snapshots, "snapshot", nil, "manifests to read instead of a live cluster: a YAML/JSON file or a directory of them, - for standard input (repeatable)")
	f.StringVarP(&o.Output, "output", "o", "json", "output format: json (compact, the default), yaml, name (KIND[.GROUP]/NAME per object, as kubectl), jsonpath=TEMPLATE, jsonpath-file=FILE, go-template=TEMPLATE or go-template-file=FILE (templates apply to the List)")
	f.StringVar(&o.FieldValidation, "validate", "strict", "unknown or duplicate fields in manifests: strict (an error), warn (a warning) or ignore, as kubectl's --validate")
	o.Kube.AddTo(f, "unused: the snapshot holds every namespace")
	addChunkSize(f, &o.ChunkSize)
	output.AddFlags(f, &o.AllowMissingKeys)
	completion.Output(cmd, SnapshotKinds()...)
	completion.Validate(cmd)
	return cmd
}

// SnapshotKinds returns the -o values snapshot accepts: a snapshot has no
// table.
func SnapshotKinds() []string { return output.Shared() }

// writeSnapshot loads the cluster and writes it as one list.
func (o *Options) writeSnapshot(ctx context.Context) error {
	set, err := o.loadSet(ctx, false)
	if err != nil {
		return err
	}
	for _, line := range append(set.Warnings, set.SkippedLines()...) {
		fmt.Fprintln(o.errOut, "warning:", line)
	}
	// JSON and YAML are written an item at a time: a big cluster's List
	// is never held whole, nor converted to YAML whole. Other formats
	// (templates) are given the whole List.
	streamed := o.format.Kind == output.JSON || o.format.Kind == output.YAML
	lw := newListWriter(o.out, o.format.Kind == output.YAML)
	list := struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Items      []json.RawMessage `json:"items"`
	}{APIVersion: "v1", Kind: "List", Items: []json.RawMessage{}}
	var names []string
	add := func(obj runtime.Object) error {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil || len(gvks) == 0 {
			return fmt.Errorf("snapshot: no kind for %T: %v", obj, err)
		}
		gvk := gvks[0]
		// The set's objects are not read again: each is written as it is.
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		if m, ok := obj.(metav1.Object); ok {
			m.SetManagedFields(nil)
			kind := strings.ToLower(gvk.Kind)
			if gvk.Group != "" {
				kind += "." + gvk.Group
			}
			names = append(names, kind+"/"+m.GetName())
		}
		if o.format.Kind == output.Name {
			return nil
		}
		b, err := json.Marshal(obj)
		if err != nil {
			return err
		}
		if !streamed {
			list.Items = append(list.Items, b)
			return nil
		}
		return lw.item(b)
	}
	// Every kind of the snapshot's objects, whatever kinds it holds (in
	// slices, or in structs of slices).
	var walk func(v reflect.Value) error
	walk = func(v reflect.Value) error {
		switch v.Kind() {
		case reflect.Struct:
			for i := range v.NumField() {
				if err := walk(v.Field(i)); err != nil {
					return err
				}
			}
		case reflect.Slice:
			for j := range v.Len() {
				if obj, ok := v.Index(j).Interface().(runtime.Object); ok {
					if err := add(obj); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	if err := walk(reflect.ValueOf(set.Objects)); err != nil {
		return err
	}
	switch {
	case o.format.Kind == output.Name:
		return output.PrintNames(o.out, names)
	case streamed:
		return lw.end()
	default:
		return o.format.Print(o.out, list)
	}
}

// listWriter writes a List an item at a time, as JSON (the bytes of the
// List marshalled whole) or as YAML (what the List converted whole reads
// as; a long string may fold at another column).
type listWriter struct {
	w      *bufio.Writer
	asYAML bool
	items  int
}

func newListWriter(out io.Writer, asYAML bool) *listWriter {
	return &listWriter{w: bufio.NewWriterSize(out, 1<<20), asYAML: asYAML}
}

// item writes the JSON b of the next item, the List's start before the
// first.
func (l *listWriter) item(b []byte) error {
	l.items++
	if l.items == 1 {
		l.start()
	}
	return writeListItem(l.w, b, l.items, l.asYAML)
}

func (l *listWriter) start() {
	if l.asYAML {
		_, _ = l.w.WriteString("apiVersion: v1\nitems:")
	} else {
		_, _ = l.w.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	}
}

// end completes the List (an empty one if no item was written) and
// flushes it.
func (l *listWriter) end() error {
	if l.items == 0 {
		l.start()
		if l.asYAML {
			_, _ = l.w.WriteString(" []")
		}
	}
	if l.asYAML {
		_, _ = l.w.WriteString("\nkind: List\n\n")
	} else {
		_, _ = l.w.WriteString("]}\n")
	}
	return l.w.Flush()
}

// writeListItem writes the JSON b of the n-th item of a List to w: after a
// comma in JSON, or as a YAML sequence entry, "- " and its lines indented
// under it.
func writeListItem(w *bufio.Writer, b []byte, n int, asYAML bool) error {
	if !asYAML {
		if n > 1 {
			_ = w.WriteByte(',')
		}
		_, err := w.Write(b)
		return err
	}
	y, err := yaml.JSONToYAML(b)
	if err != nil {
		return err
	}
	for i, line := range bytes.Split(bytes.TrimSuffix(y, []byte("\n")), []byte("\n")) {
		switch {
		case i == 0:
			_, _ = w.WriteString("\n- ")
		case len(line) == 0:
			_ = w.WriteByte('\n') // an empty line of a block scalar stays empty
		default:
			_, _ = w.WriteString("\n  ")
		}
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}
