package upstream

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
)

// Remote runs Inputs on runner processes of another kube-scheduler release
// (test/conformance138/runner and its like): a release's k8s.io/api
// cannot share a binary with this module's, so its runner is a process
// that reads one JSON Input a line and answers one JSON reply a line.
// Run may be called from several goroutines; each process serves one call
// at a time.
type Remote struct {
	procs chan *remoteProc
	all   []*remoteProc
}

type remoteProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	enc *json.Encoder
	dec *json.Decoder
}

// remoteRequest is Input on the wire: the storage objects carry their kind.
type remoteRequest struct {
	Input
	Storage []json.RawMessage
}

type remoteReply struct {
	Result  *Result `json:"result,omitempty"`
	Error   string  `json:"error,omitempty"`
	Invalid bool    `json:"invalid,omitempty"`
}

// StartRemote starts n runner processes from the binary at path.
func StartRemote(path string, n int) (*Remote, error) {
	r := &Remote{procs: make(chan *remoteProc, n)}
	for range n {
		cmd := exec.Command(path)
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			r.Close()
			return nil, fmt.Errorf("starting the upstream runner %s: %w", path, err)
		}
		p := &remoteProc{cmd: cmd, in: in, enc: json.NewEncoder(in), dec: json.NewDecoder(bufio.NewReaderSize(out, 1<<20))}
		r.all = append(r.all, p)
		r.procs <- p
	}
	return r, nil
}

// Run is the package's Run on a runner process. in.Logger is not passed.
func (r *Remote) Run(in Input) (*Result, error) {
	req := remoteRequest{Input: in}
	req.Input.Logger = nil
	for _, obj := range in.Storage {
		raw, err := encodeWithKind(obj)
		if err != nil {
			return nil, err
		}
		req.Storage = append(req.Storage, raw)
	}
	p := <-r.procs
	defer func() { r.procs <- p }()
	if err := p.enc.Encode(req); err != nil {
		return nil, fmt.Errorf("sending to the upstream runner: %w", err)
	}
	var rep remoteReply
	if err := p.dec.Decode(&rep); err != nil {
		return nil, fmt.Errorf("reading the upstream runner: %w", err)
	}
	switch {
	case rep.Invalid:
		return nil, fmt.Errorf("%w: %s", ErrInvalidInput, rep.Error)
	case rep.Error != "":
		return nil, errors.New(rep.Error)
	}
	return rep.Result, nil
}

// Close ends the runner processes.
func (r *Remote) Close() {
	for _, p := range r.all {
		_ = p.in.Close()
		_ = p.cmd.Wait()
	}
}

// encodeWithKind is obj as JSON with its apiVersion and kind.
func encodeWithKind(obj runtime.Object) (json.RawMessage, error) {
	gvks, _, err := scheme.Scheme.ObjectKinds(obj)
	if err != nil || len(gvks) == 0 {
		return nil, fmt.Errorf("the kind of %T: %w", obj, err)
	}
	c := obj.DeepCopyObject()
	c.GetObjectKind().SetGroupVersionKind(gvks[0])
	return json.Marshal(c)
}
