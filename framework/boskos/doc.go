// Package boskos is a small client of the Boskos lease server's HTTP API
// (sigs.k8s.io/boskos): acquire a resource of a type, heartbeat it with
// /update while a run uses it, and release it free or dirty. It talks HTTP
// instead of importing Boskos's own client, whose module pins Kubernetes
// libraries far older than the harness's.
//
// Tested against the real server built from
// sigs.k8s.io/boskos@v0.0.0-20210823185622-ae371c628ac9 (scripts/lib-boskos.sh):
// the calls and answers it relies on are
//
//	POST /acquire?type=T&state=free&dest=busy&owner=O&request_id=R  200 resource JSON; 404 none free or no such type
//	POST /update?name=N&owner=O&state=busy  (body: user data JSON)  200; 401 owner changed; 409 state changed
//	POST /release?name=N&owner=O&dest=free|dirty                    200; 401 owner changed
//	GET  /metric?type=T                                              200 {"current":{state:n},"owner":{owner:n}}
package boskos
