package whatif

// ReplicaSetSelectors exposes replicaSetSelectors to the package's external
// tests.
var ReplicaSetSelectors = replicaSetSelectors
