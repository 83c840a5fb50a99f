package admission

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// mirrorPodAnnotation marks a static pod's mirror on the API server.
const mirrorPodAnnotation = "kubernetes.io/config.mirror"

// validateVolumes checks what the scheduler reads of spec.volumes (path's
// child volumes), as ValidateVolumes does: names (DNS labels, unique), one
// source each, a claim name for a PersistentVolumeClaim volume (not one of
// the claims the pod's own ephemeral volumes make), and for a generic
// ephemeral volume a claim template (labels and annotations only, at least
// one access mode, a positive storage request) whose claim name,
// <pod>-<volume>, is valid. podName is "" for a template.
//
// Volumes of a single node-independent source (projected, secret, config
// map, downward API, emptyDir: nothing a filter, score or preemption
// reads, and what a lean load leaves out of its pods) are skipped, names
// and all; so are the contents of other sources than claims.
func validateVolumes(vols []v1.Volume, podName string, path *field.Path) field.ErrorList {
	if volumesPlainlyValid(vols) {
		return nil // without a map or a path
	}
	path = path.Child("volumes")
	var errs field.ErrorList
	names := make(map[string]struct{}, len(vols))
	var made sets.Set[string] // the claims ephemeral volumes make
	if podName != "" {
		for i := range vols {
			if vols[i].Ephemeral != nil {
				if made == nil {
					made = sets.New[string]()
				}
				made.Insert(podName + "-" + vols[i].Name)
			}
		}
	}
	for i := range vols {
		vol := &vols[i]
		if nodeIndependent(&vol.VolumeSource) {
			continue
		}
		var volErrs field.ErrorList
		switch n := volumeSources(&vol.VolumeSource); {
		case n == 0:
			volErrs = append(volErrs, field.Required(path.Index(i), "must specify a volume type"))
		case n > 1:
			volErrs = append(volErrs, field.Forbidden(path.Index(i), "may not specify more than 1 volume type"))
		}
		if c := vol.PersistentVolumeClaim; c != nil && c.ClaimName == "" {
			volErrs = append(volErrs, field.Required(path.Index(i).Child("persistentVolumeClaim", "claimName"), ""))
		}
		if e := vol.Ephemeral; e != nil {
			volErrs = append(volErrs, validateEphemeral(e, podName, vol.Name, path.Index(i).Child("ephemeral"))...)
		}
		if vol.Name == "" {
			volErrs = append(volErrs, field.Required(path.Index(i).Child("name"), ""))
		} else if !isDNS1123Label(vol.Name) {
			volErrs = append(volErrs, validateName(vol.Name, path.Index(i).Child("name"))...)
		}
		if _, dup := names[vol.Name]; dup {
			volErrs = append(volErrs, field.Duplicate(path.Index(i).Child("name"), vol.Name))
		}
		if len(volErrs) == 0 {
			names[vol.Name] = struct{}{}
		}
		errs = append(errs, volErrs...)
		if c := vol.PersistentVolumeClaim; c != nil && made.Has(c.ClaimName) {
			errs = append(errs, field.Invalid(path.Index(i).Child("persistentVolumeClaim", "claimName"), c.ClaimName, "must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return errs
}

// volumesPlainlyValid reports, without allocating, that validateVolumes
// finds nothing wrong with vols: a few volumes with distinct DNS label
// names, one source each, no ephemeral volume, a claim name for each
// claim volume. It answers false for anything else, for validateVolumes
// to look into.
func volumesPlainlyValid(vols []v1.Volume) bool {
	if len(vols) > 16 {
		return false
	}
	for i := range vols {
		v := &vols[i]
		if nodeIndependent(&v.VolumeSource) {
			continue
		}
		if v.Ephemeral != nil || volumeSources(&v.VolumeSource) != 1 || !isDNS1123Label(v.Name) ||
			v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == "" {
			return false
		}
		for j := range i {
			if vols[j].Name == v.Name && !nodeIndependent(&vols[j].VolumeSource) {
				return false
			}
		}
	}
	return true
}

// nodeIndependent reports whether s is a single projected, secret, config
// map, downward API or emptyDir source: one that holds nothing of a node's
// (as manifest's schedulingVolumes sees it).
func nodeIndependent(s *v1.VolumeSource) bool {
	switch {
	case s.Projected != nil, s.Secret != nil, s.ConfigMap != nil, s.DownwardAPI != nil, s.EmptyDir != nil:
		return volumeSources(s) == 1
	}
	return false
}

func validateEphemeral(e *v1.EphemeralVolumeSource, podName, volName string, path *field.Path) field.ErrorList {
	t := e.VolumeClaimTemplate
	if t == nil {
		return field.ErrorList{field.Required(path.Child("volumeClaimTemplate"), "")}
	}
	var errs field.ErrorList
	if podName != "" && volName != "" {
		claim := podName + "-" + volName
		for _, msg := range nameIsDNSSubdomain(claim, false) {
			errs = append(errs, field.Invalid(path.Child("name"), volName, fmt.Sprintf("PVC name %q: %v", claim, msg)))
		}
	}
	path = path.Child("volumeClaimTemplate")
	errs = append(errs, validateTemplateMeta(&t.ObjectMeta, path.Child("metadata"))...)
	sp := path.Child("spec")
	s := &t.Spec
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(sp.Child("accessModes"), "at least 1 access mode is required"))
	}
	rwop, other := false, false
	for _, m := range s.AccessModes {
		switch m {
		case v1.ReadWriteOncePod:
			rwop = true
		case v1.ReadWriteOnce, v1.ReadOnlyMany, v1.ReadWriteMany:
			other = true
		default:
			errs = append(errs, field.NotSupported(sp.Child("accessModes"), m, []string{string(v1.ReadOnlyMany), string(v1.ReadWriteMany), string(v1.ReadWriteOnce), string(v1.ReadWriteOncePod)}))
		}
	}
	if rwop && other {
		errs = append(errs, field.Forbidden(sp.Child("accessModes"), "may not use ReadWriteOncePod with other access modes"))
	}
	storage, ok := s.Resources.Requests[v1.ResourceStorage]
	switch {
	case !ok:
		errs = append(errs, field.Required(sp.Child("resources").Key(string(v1.ResourceStorage)), ""))
	case storage.Sign() <= 0:
		errs = append(errs, field.Invalid(sp.Child("resources").Key(string(v1.ResourceStorage)), storage.String(), "must be greater than zero"))
	default:
		errs = append(errs, ValidateQuantity(v1.ResourceStorage, storage, sp.Child("resources").Key(string(v1.ResourceStorage)))...)
	}
	if c := s.StorageClassName; c != nil && *c != "" {
		errs = append(errs, validateReference(*c, sp.Child("storageClassName"))...)
	}
	if m := s.VolumeMode; m != nil {
		errs = append(errs, enum(sp.Child("volumeMode"), string(*m), false, string(v1.PersistentVolumeBlock), string(v1.PersistentVolumeFilesystem))...)
	}
	if s.Selector != nil {
		errs = append(errs, metavalidation.ValidateLabelSelector(s.Selector, selectorOK, sp.Child("selector"))...)
	}
	return errs
}

// validateTemplateMeta checks the metadata of an object template: labels
// and annotations, and nothing else set.
func validateTemplateMeta(m *metav1.ObjectMeta, path *field.Path) field.ErrorList {
	errs := metavalidation.ValidateLabels(m.Labels, path.Child("labels"))
	errs = append(errs, apivalidation.ValidateAnnotations(m.Annotations, path.Child("annotations"))...)
	rest := *m
	rest.Labels, rest.Annotations = nil, nil
	if rest.Name != "" || rest.GenerateName != "" || rest.Namespace != "" || rest.UID != "" || rest.ResourceVersion != "" ||
		rest.Generation != 0 || !rest.CreationTimestamp.IsZero() || rest.DeletionTimestamp != nil || rest.DeletionGracePeriodSeconds != nil ||
		len(rest.OwnerReferences) > 0 || len(rest.Finalizers) > 0 || len(rest.ManagedFields) > 0 || rest.SelfLink != "" {
		errs = append(errs, field.Forbidden(path, "cannot be set: only labels and annotations may be"))
	}
	return errs
}

// volumeSources counts the sources a volume sets.
func volumeSources(s *v1.VolumeSource) int {
	n := 0
	for _, set := range [...]bool{
		s.HostPath != nil, s.EmptyDir != nil, s.GCEPersistentDisk != nil, s.AWSElasticBlockStore != nil,
		s.GitRepo != nil, s.Secret != nil, s.NFS != nil, s.ISCSI != nil, s.Glusterfs != nil,
		s.PersistentVolumeClaim != nil, s.RBD != nil, s.FlexVolume != nil, s.Cinder != nil, s.CephFS != nil,
		s.Flocker != nil, s.DownwardAPI != nil, s.FC != nil, s.AzureFile != nil, s.ConfigMap != nil,
		s.VsphereVolume != nil, s.Quobyte != nil, s.AzureDisk != nil, s.PhotonPersistentDisk != nil,
		s.Projected != nil, s.PortworxVolume != nil, s.ScaleIO != nil, s.StorageOS != nil, s.CSI != nil,
		s.Ephemeral != nil, s.Image != nil,
	} {
		if set {
			n++
		}
	}
	return n
}

// validatePodClaims checks spec.resourceClaims: names (DNS labels,
// unique), exactly one of resourceClaimName and resourceClaimTemplateName,
// each a DNS subdomain; none in a static pod's mirror.
func validatePodClaims(claims []v1.PodResourceClaim, annotations map[string]string, path *field.Path) field.ErrorList {
	if len(claims) == 0 {
		return nil
	}
	if _, mirror := annotations[mirrorPodAnnotation]; mirror {
		return field.ErrorList{field.Forbidden(field.NewPath(""), "static pods do not support resource claims")}
	}
	var errs field.ErrorList
	names := sets.New[string]()
	for i, c := range claims {
		p := path.Index(i)
		switch {
		case c.Name == "":
			errs = append(errs, field.Required(p.Child("name"), ""))
		case names.Has(c.Name):
			errs = append(errs, field.Duplicate(p.Child("name"), c.Name))
		default:
			errs = append(errs, validateName(c.Name, p.Child("name"))...)
			names.Insert(c.Name)
		}
		switch {
		case c.ResourceClaimName != nil && c.ResourceClaimTemplateName != nil:
			errs = append(errs, field.Invalid(p, c, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"))
		case c.ResourceClaimName == nil && c.ResourceClaimTemplateName == nil:
			errs = append(errs, field.Invalid(p, c, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
		}
		if n := c.ResourceClaimName; n != nil {
			errs = append(errs, validateRequiredReference(*n, p.Child("resourceClaimName"))...)
		}
		if n := c.ResourceClaimTemplateName; n != nil {
			errs = append(errs, validateRequiredReference(*n, p.Child("resourceClaimTemplateName"))...)
		}
	}
	return errs
}

// podClaimNames are the names of the pod's resource claims, for its
// containers' resources.claims to name.
func podClaimNames(claims []v1.PodResourceClaim) sets.Set[string] {
	if len(claims) == 0 {
		return nil
	}
	names := sets.New[string]()
	for _, c := range claims {
		if c.Name != "" {
			names.Insert(c.Name)
		}
	}
	return names
}

// validateRequiredReference is validateReference for a name that may not
// be empty.
func validateRequiredReference(name string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range nameIsDNSSubdomain(name, false) {
		errs = append(errs, field.Invalid(path, name, msg))
	}
	return errs
}
