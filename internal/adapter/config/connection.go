package config

import (
	"fmt"
	"time"

	"github.com/reprieve/reprieve/internal/adapter/files"
	"k8s.io/apimachinery/pkg/util/validation/field"
	configv1 "k8s.io/kube-scheduler/config/v1"
	"sigs.k8s.io/yaml"
)

// Client-connection and leader-election defaults, as kube-scheduler's
// (SetDefaults_KubeSchedulerConfiguration and component-base's recommended
// leader-election defaults), except the lease's name: reprieve runs beside
// kube-scheduler and must not take its lease.
const (
	DefaultContentType       = "application/vnd.kubernetes.protobuf"
	DefaultQPS               = 50
	DefaultBurst             = 100
	DefaultLeaseDuration     = 15 * time.Second
	DefaultRenewDeadline     = 10 * time.Second
	DefaultRetryPeriod       = 2 * time.Second
	DefaultResourceLock      = "leases"
	DefaultResourceName      = "reprieve"
	DefaultResourceNamespace = "kube-system"
	// leaderElectionJitter is client-go's leaderelection.JitterFactor: its
	// elector refuses a renew deadline not above 1.2 retry periods.
	leaderElectionJitter = 1.2
)

// ClientConnection is a KubeSchedulerConfiguration's clientConnection.
type ClientConnection struct {
	// Kubeconfig is the kubeconfig file; "" means in-cluster (or the
	// command's --kubeconfig).
	Kubeconfig string
	// AcceptContentTypes is the Accept header; "" leaves client-go's.
	AcceptContentTypes string
	// ContentType is the content type of request bodies.
	ContentType string
	// QPS and Burst are the client's rate limits; a negative QPS disables
	// them, as in client-go.
	QPS   float32
	Burst int32
}

// LeaderElection is a KubeSchedulerConfiguration's leaderElection.
type LeaderElection struct {
	// LeaderElect runs the scheduler only while it holds the lease.
	LeaderElect   bool
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	// ResourceLock is the kind of lock; only "leases" is valid.
	ResourceLock      string
	ResourceName      string
	ResourceNamespace string
}

// Connection is how the scheduler talks to the API server: the
// clientConnection and leaderElection of a KubeSchedulerConfiguration.
type Connection struct {
	ClientConnection ClientConnection
	LeaderElection   LeaderElection
}

// DefaultConnection returns the connection settings used without a file,
// kube-scheduler's defaults.
func DefaultConnection() Connection {
	var kc configv1.KubeSchedulerConfiguration
	return connectionFrom(&kc)
}

// LoadConnection reads the clientConnection and leaderElection of a
// configuration file and defaults them as kube-scheduler does. It does not
// validate them: flags may still override them (see Connection.Validate).
func LoadConnection(path string) (Connection, error) {
	data, err := files.Read(path, files.MaxSmall)
	if err != nil {
		return Connection{}, err
	}
	c, err := ParseConnection(data)
	if err != nil {
		return Connection{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConnection is LoadConnection on a document.
func ParseConnection(data []byte) (Connection, error) {
	var kc configv1.KubeSchedulerConfiguration
	if err := yaml.UnmarshalStrict(data, &kc); err != nil {
		return Connection{}, fmt.Errorf("malformed KubeSchedulerConfiguration: %v", err)
	}
	if kc.APIVersion != apiVersion || kc.Kind != "KubeSchedulerConfiguration" {
		return Connection{}, fmt.Errorf("apiVersion/kind: want %s KubeSchedulerConfiguration, got %q %q", apiVersion, kc.APIVersion, kc.Kind)
	}
	return connectionFrom(&kc), nil
}

// connectionFrom defaults the two sections as kube-scheduler does and
// converts them.
func connectionFrom(kc *configv1.KubeSchedulerConfiguration) Connection {
	cc, le := kc.ClientConnection, kc.LeaderElection
	c := Connection{
		ClientConnection: ClientConnection{
			Kubeconfig:         cc.Kubeconfig,
			AcceptContentTypes: cc.AcceptContentTypes,
			ContentType:        cc.ContentType,
			QPS:                cc.QPS,
			Burst:              cc.Burst,
		},
		LeaderElection: LeaderElection{
			LeaderElect:       le.LeaderElect == nil || *le.LeaderElect,
			LeaseDuration:     le.LeaseDuration.Duration,
			RenewDeadline:     le.RenewDeadline.Duration,
			RetryPeriod:       le.RetryPeriod.Duration,
			ResourceLock:      le.ResourceLock,
			ResourceName:      le.ResourceName,
			ResourceNamespace: le.ResourceNamespace,
		},
	}
	if c.ClientConnection.ContentType == "" {
		c.ClientConnection.ContentType = DefaultContentType
	}
	if c.ClientConnection.QPS == 0 {
		c.ClientConnection.QPS = DefaultQPS
	}
	if c.ClientConnection.Burst == 0 {
		c.ClientConnection.Burst = DefaultBurst
	}
	l := &c.LeaderElection
	setDefault(&l.LeaseDuration, DefaultLeaseDuration)
	setDefault(&l.RenewDeadline, DefaultRenewDeadline)
	setDefault(&l.RetryPeriod, DefaultRetryPeriod)
	setDefault(&l.ResourceLock, DefaultResourceLock)
	setDefault(&l.ResourceName, DefaultResourceName)
	setDefault(&l.ResourceNamespace, DefaultResourceNamespace)
	return c
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Validate checks the settings as kube-scheduler validates its
// configuration once the flags are applied, and also what client-go's
// leader elector would otherwise refuse at run time (a renew deadline not
// above 1.2 retry periods). The error names the fields.
func (c Connection) Validate() error {
	var errs field.ErrorList
	cc := field.NewPath("clientConnection")
	if c.ClientConnection.Burst < 0 {
		errs = append(errs, field.Invalid(cc.Child("burst"), c.ClientConnection.Burst, "must be non-negative"))
	}
	// client-go refuses a rate limit without a burst only when it makes
	// the client, after the informers and the serving have started.
	if c.ClientConnection.QPS > 0 && c.ClientConnection.Burst == 0 {
		errs = append(errs, field.Invalid(cc.Child("burst"), c.ClientConnection.Burst, "must be positive when qps is set"))
	}
	le, p := c.LeaderElection, field.NewPath("leaderElection")
	if !le.LeaderElect {
		return errs.ToAggregate()
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"leaseDuration", le.LeaseDuration}, {"renewDeadline", le.RenewDeadline}, {"retryPeriod", le.RetryPeriod}} {
		if d.v <= 0 {
			errs = append(errs, field.Invalid(p.Child(d.name), d.v.String(), "must be greater than zero"))
		}
	}
	if le.LeaseDuration <= le.RenewDeadline {
		errs = append(errs, field.Invalid(p.Child("leaseDuration"), le.LeaseDuration.String(), "must be greater than renewDeadline"))
	}
	if float64(le.RenewDeadline) <= leaderElectionJitter*float64(le.RetryPeriod) {
		errs = append(errs, field.Invalid(p.Child("renewDeadline"), le.RenewDeadline.String(), "must be greater than 1.2 × retryPeriod"))
	}
	if le.ResourceLock != DefaultResourceLock {
		errs = append(errs, field.Invalid(p.Child("resourceLock"), le.ResourceLock, `resourceLock value must be "leases"`))
	}
	if le.ResourceNamespace == "" {
		errs = append(errs, field.Required(p.Child("resourceNamespace"), ""))
	}
	if le.ResourceName == "" {
		errs = append(errs, field.Required(p.Child("resourceName"), ""))
	}
	return errs.ToAggregate()
}
