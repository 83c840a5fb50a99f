package snapshot

import v1 "k8s.io/api/core/v1"

// bindAllHostIP is the host IP that conflicts with every other IP.
const bindAllHostIP = "0.0.0.0"

// HostPort is a port bound on a node: host IP, protocol and port number,
// normalised (empty IP is 0.0.0.0, empty protocol is TCP).
type HostPort struct {
	IP       string
	Protocol string
	Port     int32
}

func normalisePort(ip, protocol string, port int32) HostPort {
	if ip == "" {
		ip = bindAllHostIP
	}
	if protocol == "" {
		protocol = string(v1.ProtocolTCP)
	}
	return HostPort{IP: ip, Protocol: protocol, Port: port}
}

// PortSet is the set of host ports in use on a node. Like the scheduler's
// HostPortInfo it is a set, not a multiset: removing a pod releases its ports
// even if another pod on the node declared the same ones.
type PortSet []HostPort

// Add marks a port as used.
func (s *PortSet) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	p := normalisePort(ip, protocol, port)
	for _, q := range *s {
		if q == p {
			return
		}
	}
	*s = append(*s, p)
}

// Remove releases a port.
func (s *PortSet) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	p := normalisePort(ip, protocol, port)
	for i, q := range *s {
		if q == p {
			(*s)[i] = (*s)[len(*s)-1]
			*s = (*s)[:len(*s)-1]
			return
		}
	}
}

// AddPod marks every host port of pod as used.
func (s *PortSet) AddPod(p *Pod) {
	for _, cp := range p.HostPorts() {
		s.Add(cp.HostIP, string(cp.Protocol), cp.HostPort)
	}
}

// RemovePod releases every host port of pod.
func (s *PortSet) RemovePod(p *Pod) {
	for _, cp := range p.HostPorts() {
		s.Remove(cp.HostIP, string(cp.Protocol), cp.HostPort)
	}
}

// Conflicts reports whether binding (ip, protocol, port) would clash with a
// port in the set: 0.0.0.0 clashes with the same protocol and port on any IP,
// and any IP clashes with the same port on 0.0.0.0 or on itself.
func (s PortSet) Conflicts(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	p := normalisePort(ip, protocol, port)
	for _, q := range s {
		if q.Protocol != p.Protocol || q.Port != p.Port {
			continue
		}
		if p.IP == bindAllHostIP || q.IP == bindAllHostIP || q.IP == p.IP {
			return true
		}
	}
	return false
}

// Clone returns an independent copy of the set.
func (s PortSet) Clone() PortSet {
	if s == nil {
		return nil
	}
	return append(PortSet(nil), s...)
}
