// Command runner serves the conformance suite's upstream runner
// (package upstream) compiled against kube-scheduler v1.36: it reads one
// JSON Input a line from standard input and writes one JSON reply a line
// to standard output. test/conformance starts it (REPRIEVE_UPSTREAM_RUNNER)
// and compares reprieve, set to 1.36, with its answers: reprieve and its
// test module are built against another release's API, which cannot share
// a binary with this one.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/reprieve/reprieve/test/conformance136/upstream"
)

// request is upstream.Input on the wire: the storage objects carry their
// kind.
type request struct {
	upstream.Input
	Storage []json.RawMessage
}

// reply is Run's result, or its error (Invalid: ErrInvalidInput).
type reply struct {
	Result  *upstream.Result `json:"result,omitempty"`
	Error   string           `json:"error,omitempty"`
	Invalid bool             `json:"invalid,omitempty"`
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := json.NewEncoder(os.Stdout)
	dec := json.NewDecoder(in)
	for {
		var req request
		if err := dec.Decode(&req); err != nil {
			if errors.Is(err, os.ErrClosed) || err.Error() == "EOF" {
				return
			}
			fmt.Fprintln(os.Stderr, "runner: reading a request:", err)
			os.Exit(1)
		}
		if err := out.Encode(serve(req)); err != nil {
			fmt.Fprintln(os.Stderr, "runner: writing a reply:", err)
			os.Exit(1)
		}
	}
}

func serve(req request) reply {
	input := req.Input
	if why := unsupported(input); why != "" {
		return reply{Error: why}
	}
	for _, raw := range req.Storage {
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
		if err != nil {
			return reply{Error: fmt.Sprintf("decoding a storage object: %v", err)}
		}
		input.Storage = append(input.Storage, obj.(runtime.Object))
	}
	res, err := upstream.Run(context.Background(), input)
	if err != nil {
		return reply{Error: err.Error(), Invalid: errors.Is(err, upstream.ErrInvalidInput)}
	}
	return reply{Result: res}
}
