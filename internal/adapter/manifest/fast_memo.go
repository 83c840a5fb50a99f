package manifest

import (
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reprieve/reprieve/internal/adapter/admission"
	"github.com/reprieve/reprieve/internal/engine/snapshot"
)

// The pods of one workload are written alike but for a few fields: their
// names, UIDs, resource versions, creation times, annotations, managed
// fields, node names and statuses, and the service account token volume
// the API server gives each (spec.volumes, and the containers' volume
// mounts). For a lean load (whatif), a podMemo
// decodes, defaults and validates the rest of such a pod once and shares
// it: the first pod of a shape is prepared as usual and becomes the
// shape's template; a later pod whose bytes are the same once those fields
// are cut out (its key) is a copy of the template with its own values of
// those fields decoded strictly and validated (admission.AdmitPodInstance:
// the API server would accept the pod exactly when it accepts those fields,
// the rest being the template's). The copy shares the template's
// containers, labels, owner references, tolerations and the rest of its
// spec: nothing that reads a lean snapshot writes to a pod.
//
// A pod is first read along the keys of the two templates most likely to
// be its own (predict: the last one, and the one that came after it the
// time before), comparing its bytes with each key and skipping only its
// volatile values (matches); only a pod neither fits is walked whole and
// its key looked up. A pod of a YAML List is read from its YAML the same
// way, before it is converted (fast_yamlmemo.go).
//
// Anything the memo does not handle for certain — a key the structural
// scanner does not walk, one of those fields twice or not plainly written,
// an error or an unknown field in them, a number checkQuantities could
// refuse, a pod the API server would refuse — is prepared as usual, which
// gives the same result or words the error. TestPodMemo and
// TestFastMatchesGeneral hold the two to the same objects and errors.

// maxTemplates bounds the templates a memo keeps.
const maxTemplates = 1024

// maxKeySize bounds a template's keys (JSON and YAML: its text without the
// volatile values).
const maxKeySize = 64 << 10

// maxKnownSize bounds the text of a value a memo remembers (remember).
const maxKnownSize = 64 << 10

// A pod memo's trials (fast_trials.go): memoTrial pods, then memoPause
// without lookups after one that found little.
const (
	memoTrial = 512
	memoPause = 8 * memoTrial
)

// podMemo is one worker's templates, for one load.
type podMemo struct {
	// w is the worker the memo is of: it decodes with w's decoder.
	w         *fastWorker
	templates map[string]*podTemplate
	// hits counts the pods made from a template (its own counter, which
	// the set reads once the load is done); trials decides when pods are
	// looked up.
	hits   *int
	trials trials
	key    []byte
	spans  []span
	// pf is the pod fromTemplate validates: pfOf's full pod, but for the
	// volatile fields of the pod it validated last.
	pf   v1.Pod
	pfOf *podTemplate
	// last is the template of the last pod found; made is the template
	// the last pod prepared was made from or became, or nil.
	last, made *podTemplate
	// values are the JSON of a YAML item's volatile values
	// (matchesYAML).
	values []byte
	// masked is the last volumes or mounts masked (knownButNames);
	// names are a YAML item's, masked (maskYAMLNames).
	masked, names []byte
	// conds is the room pods' status conditions are decoded into
	// (fromTemplate).
	conds []v1.PodCondition
	// entries is the room pods' managed fields are decoded into
	// (fromTemplate).
	entries []metav1.ManagedFieldsEntry
	// shape is the status shape of the last status matches (or
	// matchesYAML) read, and start that status's start time; yamlStatus
	// is the YAML lines of the status matchesYAML converted last, or nil.
	shape      *statusShape
	start      *metav1.Time
	yamlStatus []byte
	// yamlManaged is the YAML lines of the managed fields matchesYAML
	// converted last, or nil; walked says matches decoded the managed
	// fields entry by entry (not along a managed shape).
	yamlManaged []byte
	walked      bool
	// slab is where the next pods are made: allocated podSlab at a time,
	// as they all live as long as the snapshot.
	slab []snapshot.PodParts
	// annotations are the values of that field decoded, by their text
	// (remember): often alike in a workload's pods, and read only to be
	// validated (a lean pod drops them).
	annotations map[string]map[string]string
}

// remember records in *known the value v decoded from text, up to
// maxTemplates values of up to maxKnownSize bytes.
func remember[V any](known *map[string]V, text []byte, v V) {
	if len(*known) >= maxTemplates || len(text) > maxKnownSize {
		return
	}
	if *known == nil {
		*known = map[string]V{}
	}
	(*known)[string(text)] = v
}

// podSlab is how many pods a memo allocates at once.
const podSlab = 64

// podTemplate is a shape's first pod as prepared: key is its key
// (makeKey), full it defaulted and validated, and shape the same leaned
// and without its own fields (snapshot.PodParts), which the pods of the
// template share.
type podTemplate struct {
	key string
	// fields are the volatile fields whose values key leaves out, in
	// order.
	fields []volatileField
	// next is the template of the pod that came after one of this
	// template's the last time (podMemo.predict).
	next *podTemplate
	// yaml is the template's YAML key, once a pod of its shape was read
	// from a YAML List (fast_yamlmemo.go); yamlTried says one was made or
	// could not be.
	yaml        *yamlKey
	yamlTried   bool
	full, shape *v1.Pod
	p           prepared
	// sets are the field sets of the managed fields of the template's
	// last pod.
	sets fieldSets
	// masked are volumes and mounts its pods had, but for their names,
	// each after its field's byte (knownButNames); yamlMasked the same
	// as YAML lines (maskYAMLNames).
	masked, yamlMasked map[string]struct{}
	// lastMasked are the volumes and the mounts (by field, from
	// fieldVolumes) masked last found or remembered, which matches
	// reads a pod's along.
	lastMasked [2]string
	// statuses are statuses its pods had, but for their volatile values
	// (fast_statusmask.go); lastStatus is the one found last.
	statuses   []*statusShape
	lastStatus int
	// yamlStatuses are the same as YAML lines (fast_yamlmemo.go).
	yamlStatuses   []yamlStatusShape
	lastYAMLStatus int
	// yamlManaged are managed fields its pods had as YAML lines, but for
	// their times and list keys (fast_managedmask.go).
	yamlManaged     []yamlManagedShape
	lastYAMLManaged int
	// managed are the same as JSON.
	managed     []managedShape
	lastManaged int
}

// span is where a value the memo decodes per pod lies in the document.
type span struct {
	start, end int
	field      volatileField
	// read says the value is already decoded (matches): managed fields,
	// into the memo's entries; a status, as the memo's shape with its
	// start time; volumes or mounts, known but for their names.
	read bool
	// maskFrom and maskTo are where a YAML item's volumes or mounts
	// are in m.names, masked (maskYAMLNames).
	maskFrom, maskTo int
}

// volatileField names the fields the memo decodes per pod.
type volatileField uint8

const (
	fieldName volatileField = iota
	fieldUID
	fieldResourceVersion
	fieldCreationTimestamp
	fieldAnnotations
	fieldManagedFields
	fieldNodeName
	fieldStatus
	// fieldVolumes is spec.volumes and fieldMounts a container's
	// volumeMounts: a pod's service account token volume has a name of
	// its own (kube-api-access-xxxxx), mounted in every container.
	fieldVolumes
	fieldMounts
)

// metadataFields are the volatile fields of metadata, by key.
var metadataFields = map[string]volatileField{
	"name": fieldName, "uid": fieldUID, "resourceVersion": fieldResourceVersion,
	"creationTimestamp": fieldCreationTimestamp, "annotations": fieldAnnotations, "managedFields": fieldManagedFields,
}

// newPodMemo returns an empty memo of the worker w that counts its hits in
// hits.
func newPodMemo(w *fastWorker, hits *int) *podMemo {
	return &podMemo{w: w, templates: map[string]*podTemplate{}, hits: hits, trials: trials{size: memoTrial, pause: memoPause}}
}

// prepare is prepare(raw, true) through the memo, or declines as the
// worker's decode does.
func (m *podMemo) prepare(raw []byte) (prepared, bool) {
	m.made, m.yamlStatus, m.yamlManaged = nil, nil, nil
	if m.trials.skip() {
		return m.w.decode(raw, true)
	}
	// The pods of a workload most often come one after the other, or the
	// workloads' pods in turn (a node's pods, node after node): the
	// template that came after the last one the time before, and the last
	// one, are tried first, by their keys alone.
	if t := m.predict(raw); t != nil {
		return m.prepareFrom(t, raw)
	}
	if sniffKind(raw) != "Pod" || !m.cut(raw) {
		return m.w.decode(raw, true)
	}
	t := m.templates[string(m.makeKey(raw))]
	if t != nil {
		m.follow(t)
		return m.prepareFrom(t, raw)
	}
	m.count(false)
	if len(m.templates) >= maxTemplates {
		return m.w.decode(raw, true)
	}
	p, ok := m.w.decode(raw, false)
	full, isPod := p.obj.(*v1.Pod)
	if !ok || !isPod || p.problems().admitErr != nil {
		return p, ok // an error is worded alike, lean or not
	}
	shape := full.DeepCopy()
	leanPod(shape)
	p.obj = snapshot.SplitPod(shape)
	if key := m.makeKey(raw); !suspiciousNumbers(raw) && len(key) <= maxKeySize {
		key := string(key)
		fields := make([]volatileField, len(m.spans))
		for i, sp := range m.spans {
			fields[i] = sp.field
		}
		t := &podTemplate{key: key, fields: fields, full: full, shape: shape, p: p}
		m.templates[key] = t
		m.follow(t)
		m.made = t
	}
	return p, true
}

// cut records in m.spans where the values of raw's volatile fields are.
// It returns false for a document it does not walk, or that holds a
// volatile field twice.
func (m *podMemo) cut(raw []byte) bool {
	m.spans = m.spans[:0]
	ok := true
	// seen holds a bit per volatile field, and for metadata, spec and
	// status at the top level.
	var seen uint32
	first := func(bit uint32) bool {
		if seen&bit != 0 {
			ok = false
			return false
		}
		seen |= bit
		return true
	}
	const containersBit, initContainersBit, metadataBit, specBit, statusBit = 1 << 27, 1 << 28, 1 << 29, 1 << 30, 1 << 31
	// Spans are recorded by their offsets in raw, which is walked once:
	// metadata, spec and its containers in place, the rest skipped.
	add := func(at, end int, f volatileField) {
		if f == fieldMounts || first(1<<f) {
			m.spans = append(m.spans, span{start: at, end: end, field: f})
		}
	}
	// skipAs skips the value at v, recording it as f.
	skipAs := func(v int, f volatileField) int {
		end := skipValue(raw, v)
		if end >= 0 {
			add(v, end, f)
		}
		return end
	}
	// containers finds each container's volumeMounts in the array at v.
	containers := func(v int) int {
		return walkArray(raw, v, func(e int) int {
			mounts := false
			return walkObject(raw, e, func(k []byte, cv int) int {
				if string(k) != "volumeMounts" {
					return skipValue(raw, cv)
				}
				if mounts {
					ok = false
				}
				mounts = true
				return skipAs(cv, fieldMounts)
			})
		})
	}
	end := walkObject(raw, 0, func(key []byte, v int) int {
		switch string(key) {
		case "metadata":
			if !first(metadataBit) {
				return -1
			}
			return walkObject(raw, v, func(k []byte, mv int) int {
				if f, volatile := metadataFields[string(k)]; volatile {
					return skipAs(mv, f)
				}
				return skipValue(raw, mv)
			})
		case "spec":
			if !first(specBit) {
				return -1
			}
			return walkObject(raw, v, func(k []byte, sv int) int {
				switch string(k) {
				case "nodeName":
					return skipAs(sv, fieldNodeName)
				case "volumes":
					return skipAs(sv, fieldVolumes)
				case "containers":
					if !first(containersBit) {
						return -1
					}
					return containers(sv)
				case "initContainers":
					if !first(initContainersBit) {
						return -1
					}
					return containers(sv)
				}
				return skipValue(raw, sv)
			})
		case "status":
			if !first(statusBit) {
				return -1
			}
			return skipAs(v, fieldStatus)
		}
		return skipValue(raw, v)
	})
	return onlySpaceAfter(raw, end) && ok
}

// makeKey returns raw's key (in m's buffer): raw without the values of the
// volatile fields m.spans holds, each replaced by a NUL byte, which JSON
// cannot hold (a template is made only of a document that decodes, whose
// key's text holds none: matches reads the NULs as the cut values).
func (m *podMemo) makeKey(raw []byte) []byte {
	key := m.key[:0]
	prev := 0
	for _, s := range m.spans {
		key = append(key, raw[prev:s.start]...)
		key = append(key, 0)
		prev = s.end
	}
	key = append(key, raw[prev:]...)
	m.key = key
	return key
}

// count counts a pod looked up, and whether it was made from a template.
func (m *podMemo) count(made bool) {
	if made {
		*m.hits++
	}
	m.trials.count(made)
}

// prepareFrom prepares raw, whose key is t's, from t, or as the worker's
// decode does when the template cannot make it, and counts the lookup.
func (m *podMemo) prepareFrom(t *podTemplate, raw []byte) (prepared, bool) {
	p, ok := m.fromTemplate(t, raw)
	m.count(ok)
	if !ok {
		return m.w.decode(raw, true)
	}
	m.made = t
	return p, true
}

// candidates returns the two templates most likely to come next: the one
// that followed m.last the time before, and m.last; either may be nil, and
// the second is nil when it is the first.
func (m *podMemo) candidates() [2]*podTemplate {
	last := m.last
	if last == nil {
		return [2]*podTemplate{}
	}
	if last.next == last {
		return [2]*podTemplate{last}
	}
	return [2]*podTemplate{last.next, last}
}

// predict returns the template, of the candidates, whose key raw has, with
// raw's spans in m.spans, or nil.
func (m *podMemo) predict(raw []byte) *podTemplate {
	for _, t := range m.candidates() {
		if t != nil && m.matches(raw, t) {
			m.follow(t)
			return t
		}
	}
	return nil
}

// follow records that a pod of t came after one of m.last's.
func (m *podMemo) follow(t *podTemplate) {
	if m.last != nil {
		m.last.next = t
	}
	m.last = t
}

// matches reports whether raw's key is t's, reading raw along t's key: the
// text between t's volatile values is compared, and each of raw's volatile
// values is skipped where t's was, recorded in m.spans. cut would walk raw
// exactly so, since up to each value raw is the text cut walked in t's
// document: matches is true exactly when cut(raw) is and raw's key is t's,
// with the same spans, and it does not walk what is t's.
func (m *podMemo) matches(raw []byte, t *podTemplate) bool {
	m.spans, m.walked = m.spans[:0], false
	key, at := t.key, 0
	for _, f := range t.fields {
		var ok bool
		if key, at, ok = keySegment(key, raw, at); !ok || skipSpace(raw, at) != at {
			return false // cut's values start past the space before them
		}
		// The managed fields, most of a pod's bytes when kubectl
		// keeps them, are read here once, not skipped and read again.
		end, read := -1, false
		switch f {
		case fieldManagedFields:
			if len(t.managed) > 0 {
				sh := &t.managed[t.lastManaged]
				if end = m.w.dec.managedAlike(raw, at, sh.segments); end >= 0 {
					m.entries, read = append(m.entries[:0], sh.entries...), true
					break
				}
			}
			if end = m.w.dec.leanManagedFieldsAt(raw, at, &m.entries, &t.sets); end >= 0 {
				read, m.walked = true, true
			}
		case fieldVolumes, fieldMounts:
			// Volumes and mounts alike but for their names to the
			// last ones known are known (fast_namemask.go).
			if known := t.lastMasked[f-fieldVolumes]; known != "" {
				end = alikeButNames(raw, at, known)
				read = end >= 0
			}
		case fieldStatus:
			// So is the status, when it is alike to the last one
			// of the template's pods (fast_statusmask.go).
			if len(t.statuses) > 0 {
				sh := t.statuses[t.lastStatus]
				if end, m.start = m.w.dec.statusAlike(raw, at, sh.segments); end >= 0 {
					read, m.shape = true, sh
				}
			}
		}
		if !read {
			end = skipValue(raw, at)
		}
		if end < 0 {
			return false
		}
		m.spans = append(m.spans, span{start: at, end: end, field: f, read: read})
		at = end
	}
	return string(raw[at:]) == key
}

// keySegment reports whether doc holds at at the text of key up to key's
// next NUL (where a volatile value was cut out), and returns the rest of
// key after that NUL and where the value starts in doc.
func keySegment(key string, doc []byte, at int) (string, int, bool) {
	n := strings.IndexByte(key, 0)
	if n < 0 || len(doc)-at < n || string(doc[at:at+n]) != key[:n] {
		return "", 0, false
	}
	return key[n+1:], at + n, true
}

// fromTemplate prepares raw, whose key is t's, as a copy of t with raw's
// own volatile fields; it returns false for anything prepare must do.
func (m *podMemo) fromTemplate(t *podTemplate, raw []byte) (prepared, bool) {
	// pf is the memo's: only pl, below, outlives this call. It is
	// copied from the template only when the template changes (a
	// workload's pods come one after the other): the volatile fields,
	// cleared here, are all this call writes to it.
	if m.pfOf != t {
		m.pf, m.pfOf = *t.full, t
	}
	pf := &m.pf
	pf.Name, pf.UID, pf.ResourceVersion, pf.CreationTimestamp = "", "", "", metav1.Time{}
	pf.Annotations, pf.ManagedFields = nil, nil
	pf.Spec.NodeName, pf.Spec.Volumes = "", nil
	// The status is decoded into conds, cleared (a decoder reuses the
	// room of a slice it decodes into), which lean drops but for a
	// DisruptionTarget condition, copied out below.
	clear(m.conds[:cap(m.conds)])
	pf.Status = v1.PodStatus{Conditions: m.conds[:0]}
	// status is the status's text when leanPodStatus decoded it, into
	// decoded, to be remembered (rememberStatus).
	var status []byte
	var decoded v1.PodStatus
	// shaped says the status is a status shape's: its resources are
	// those of the pod that made the shape, which admission accepted.
	shaped := false
	// managed is a YAML item's managed fields, when decoded, to be
	// remembered (rememberYAMLManaged), and walkedManaged a JSON pod's
	// (rememberManaged).
	var managed, walkedManaged []byte
	for _, s := range m.spans {
		value := raw[s.start:s.end]
		switch s.field {
		case fieldManagedFields:
			// Without their field sets, into the memo's room: they
			// are validated, and dropped.
			if s.read {
				pf.ManagedFields = m.entries
				if m.walked {
					walkedManaged = value
				}
				continue
			}
			if m.w.dec.leanManagedFields(value, &m.entries, &t.sets) {
				pf.ManagedFields, managed = m.entries, m.yamlManaged
				continue
			}
		case fieldCreationTimestamp:
			if t, ok := m.w.dec.timeOf(value); ok {
				pf.CreationTimestamp = t
				continue
			}
		case fieldAnnotations:
			if v, ok := m.annotations[string(value)]; ok {
				pf.Annotations = v
				continue
			}
		case fieldVolumes, fieldMounts:
			// Volumes lean drops whole, or mounts (it drops them
			// all), alike but for their names to ones decoded before.
			if s.read {
				continue
			}
			if m.knownButNames(t, value, s.field) {
				m.rememberYAMLNames(t, s)
				continue
			}
		case fieldStatus:
			// Alike but for its volatile values to one decoded before,
			// or typed, as lean keeps it, or else whole by reflection.
			if s.read {
				m.setStatus(&pf.Status, m.shape, m.start)
				shaped = true
				continue
			}
			if sh := m.knownStatus(t, value, &pf.Status); sh != nil {
				if m.yamlStatus != nil {
					m.rememberYAMLStatus(t, m.yamlStatus, sh)
				}
				shaped = true
				continue
			}
			if m.w.dec.leanPodStatus(value, &pf.Status) {
				status, decoded = value, pf.Status
				continue
			}
			clear(m.conds[:cap(m.conds)])
			pf.Status = v1.PodStatus{Conditions: m.conds[:0]}
		}
		var target any
		switch s.field {
		case fieldName:
			target = &pf.Name
		case fieldResourceVersion:
			target = &pf.ResourceVersion
		case fieldNodeName:
			target = &pf.Spec.NodeName
		case fieldUID:
			target = &pf.UID
		case fieldCreationTimestamp:
			target = &pf.CreationTimestamp
		case fieldAnnotations:
			target = &pf.Annotations
		case fieldManagedFields:
			target = &pf.ManagedFields
		case fieldStatus:
			target = &pf.Status
		case fieldVolumes:
			target = &pf.Spec.Volumes
		case fieldMounts:
			// A container's volume mounts are decoded to be checked,
			// and dropped: lean drops them, and validation does not
			// read them (pf keeps the template's containers).
			target = new([]v1.VolumeMount)
		}
		if str, plain := plainJSONString(value); plain {
			switch dst := target.(type) {
			case *string:
				*dst = str
				continue
			case *types.UID:
				*dst = types.UID(str)
				continue
			}
		}
		m.w.dec.reuse = s.field == fieldStatus // into conds
		ok := m.w.dec.decode(value, target)
		m.w.dec.reuse = false
		if !ok {
			return prepared{}, false
		}
		switch s.field {
		case fieldAnnotations:
			remember(&m.annotations, value, pf.Annotations)
		case fieldVolumes:
			if pf.Spec.Volumes = schedulingVolumes(pf.Spec.Volumes); pf.Spec.Volumes == nil {
				m.rememberButNames(t)
				m.rememberYAMLNames(t, s)
			}
		case fieldMounts:
			m.rememberButNames(t)
			m.rememberYAMLNames(t, s)
		}
	}
	if pf.Name == "" {
		return prepared{}, false
	}
	if shaped && !admission.AdmitPodInstanceOfResources(pf) || !shaped && !admission.AdmitPodInstance(pf) {
		return prepared{}, false
	}
	if len(m.slab) == 0 {
		m.slab = make([]snapshot.PodParts, podSlab)
	}
	pl := &m.slab[0]
	m.slab = m.slab[1:]
	*pl = snapshot.PodParts{
		Shape: t.shape, Name: pf.Name, UID: pf.UID, ResourceVersion: pf.ResourceVersion,
		CreationTimestamp: pf.CreationTimestamp, NodeName: pf.Spec.NodeName, Volumes: pf.Spec.Volumes,
	}
	m.conds = pf.Status.Conditions
	if managed != nil {
		m.rememberYAMLManaged(t, managed, pf.ManagedFields)
	}
	if walkedManaged != nil {
		m.rememberManaged(t, walkedManaged, pf.ManagedFields)
	}
	leanStatus(&pf.Status)
	leanContainerStatuses(&pf.Status, &pf.Spec)
	if status != nil && len(pf.Status.Conditions) == 0 && pf.Status.ContainerStatuses == nil {
		if sh := m.rememberStatus(t, status, &decoded); sh != nil && m.yamlStatus != nil {
			m.rememberYAMLStatus(t, m.yamlStatus, sh)
		}
	}
	pf.Status.Conditions = slices.Clone(pf.Status.Conditions)
	pl.Status.Set(&pf.Status)
	p := t.p
	p.h.Name = pf.Name
	p.obj = pl
	return p, true
}
