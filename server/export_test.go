package server

// RouteList is every (method, path) of the routes table, for the tests of
// package server_test.
func RouteList() [][2]string {
	out := make([][2]string, len(routes))
	for i, rt := range routes {
		out[i] = [2]string{rt.method, rt.path}
	}
	return out
}

// WriteRoute reports whether method path is a write route (the token is
// always required).
func WriteRoute(method, path string) bool {
	for _, rt := range routes {
		if rt.method == method && rt.path == path {
			return rt.write
		}
	}
	return false
}
