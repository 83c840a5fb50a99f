package config

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseConnection(t *testing.T) {
	defaults := DefaultConnection()
	tests := map[string]struct {
		doc     string
		want    Connection
		wantErr bool
	}{
		"nothing set: kube-scheduler's defaults": {
			doc: header,
			want: Connection{
				ClientConnection: ClientConnection{ContentType: "application/vnd.kubernetes.protobuf", QPS: 50, Burst: 100},
				LeaderElection: LeaderElection{
					LeaderElect: true, LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
					ResourceLock: "leases", ResourceName: "reprieve", ResourceNamespace: "kube-system",
				},
			},
		},
		"everything set": {
			doc: header + `clientConnection:
  kubeconfig: /etc/k.conf
  qps: 200
  burst: 400
  contentType: application/json
  acceptContentTypes: application/json,application/vnd.kubernetes.protobuf
leaderElection:
  leaderElect: false
  leaseDuration: 30s
  renewDeadline: 20s
  retryPeriod: 5s
  resourceLock: leases
  resourceName: mine
  resourceNamespace: sched
`,
			want: Connection{
				ClientConnection: ClientConnection{
					Kubeconfig: "/etc/k.conf", QPS: 200, Burst: 400, ContentType: "application/json",
					AcceptContentTypes: "application/json,application/vnd.kubernetes.protobuf",
				},
				LeaderElection: LeaderElection{
					LeaderElect: false, LeaseDuration: 30 * time.Second, RenewDeadline: 20 * time.Second, RetryPeriod: 5 * time.Second,
					ResourceLock: "leases", ResourceName: "mine", ResourceNamespace: "sched",
				},
			},
		},
		"only qps set keeps the other defaults": {
			doc: header + "clientConnection: {qps: 7}\nleaderElection: {resourceName: x}\n",
			want: func() Connection {
				c := defaults
				c.ClientConnection.QPS = 7
				c.LeaderElection.ResourceName = "x"
				return c
			}(),
		},
		"unknown field": {doc: header + "clientConnection: {qpss: 7}\n", wantErr: true},
		"wrong kind":    {doc: "apiVersion: v1\nkind: Pod\n", wantErr: true},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseConnection([]byte(tc.doc))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want,+got)\n%s", diff)
			}
		})
	}
}

func TestConnectionValidate(t *testing.T) {
	tests := map[string]struct {
		change  func(*Connection)
		wantErr string
	}{
		"defaults":       {change: func(*Connection) {}},
		"negative burst": {change: func(c *Connection) { c.ClientConnection.Burst = -1 }, wantErr: "clientConnection.burst: Invalid value: -1: must be non-negative"},
		"negative qps is unlimited, as in client-go": {change: func(c *Connection) { c.ClientConnection.QPS = -1 }},
		"lease not above renew deadline": {
			change:  func(c *Connection) { c.LeaderElection.LeaseDuration = 10 * time.Second },
			wantErr: `leaderElection.leaseDuration: Invalid value: "10s": must be greater than renewDeadline`,
		},
		"renew deadline within the jitter of the retry period": {
			change:  func(c *Connection) { c.LeaderElection.RetryPeriod = 9 * time.Second },
			wantErr: `leaderElection.renewDeadline: Invalid value: "10s": must be greater than 1.2 × retryPeriod`,
		},
		"zero retry period": {
			change:  func(c *Connection) { c.LeaderElection.RetryPeriod = -time.Second },
			wantErr: `leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero`,
		},
		"endpoints lock": {
			change:  func(c *Connection) { c.LeaderElection.ResourceLock = "endpoints" },
			wantErr: `leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"`,
		},
		"empty lease name": {
			change:  func(c *Connection) { c.LeaderElection.ResourceName = "" },
			wantErr: "leaderElection.resourceName: Required value",
		},
		"leader election off: its fields are not checked": {
			change: func(c *Connection) {
				c.LeaderElection.LeaderElect = false
				c.LeaderElection.ResourceLock = "endpoints"
				c.LeaderElection.LeaseDuration = 0
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := DefaultConnection()
			tc.change(&c)
			err := c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tc.wantErr {
				t.Errorf("Validate() = %q, want %q", got, tc.wantErr)
			}
		})
	}
}
