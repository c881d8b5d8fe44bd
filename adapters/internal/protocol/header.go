package protocol

// The HTTP methods and statuses the protocol uses. They are HTTP's own
// numbers and names (net/http's constants have the same values); they are
// spelled here so that the protocol builds without net/http, which a
// GOOS=js node leaves out (see Header).
const (
	methodGet    = "GET"
	methodPut    = "PUT"
	methodPost   = "POST"
	methodDelete = "DELETE"

	statusOK                    = 200
	statusBadRequest            = 400
	statusUnauthorized          = 401
	statusNotFound              = 404
	statusMethodNotAllowed      = 405
	statusRequestEntityTooLarge = 413
	statusInternalServerError   = 500
)

// Field returns the first value of h's field k, which must be a canonical
// name (one of the protocol's constants): what h.Get(k) returns, without
// canonicalising k again on every call of a request's path.
func Field(h Header, k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}
