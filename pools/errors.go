package pools

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors that stores return and the API maps to HTTP statuses.
var (
	// ErrNotFound: no object with that id.
	ErrNotFound = errors.New("not found")
	// ErrStale: the caller's revision (If-Match) is not the stored one.
	ErrStale = errors.New("stale revision")
	// ErrUnavailable: the store cannot be reached.
	ErrUnavailable = errors.New("store unavailable")
)

// FieldError is one problem with one field of an object.
type FieldError struct {
	// Path is a JSON path such as "origins[2].weight".
	Path    string `json:"path"`
	Message string `json:"message"`
}

// ValidationError lists every field error of an object, never only the first.
type ValidationError struct {
	Errors []FieldError
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Errors))
	for i, fe := range e.Errors {
		parts[i] = fe.Path + ": " + fe.Message
	}
	return "invalid: " + strings.Join(parts, "; ")
}

// NameTaken is the error for a named thing (a token, a TSIG key) whose
// name is in use already; both stores answer it alike.
func NameTaken(what, name string) error {
	return &ValidationError{Errors: []FieldError{{Path: "name", Message: fmt.Sprintf("a %s named %q already exists", what, name)}}}
}

// Referrer names an object that refers to another.
type Referrer struct {
	Kind string `json:"kind"` // "pool", "load_balancer"
	ID   string `json:"id"`
	Name string `json:"name"`
}

// ConflictError: the object cannot be deleted (or changed) because others
// refer to it.
type ConflictError struct {
	Kind      string
	ID        string
	Referrers []Referrer
}

func (e *ConflictError) Error() string {
	names := make([]string, len(e.Referrers))
	for i, r := range e.Referrers {
		names[i] = r.Kind + " " + r.ID
	}
	return fmt.Sprintf("%s %s is referenced by %s", e.Kind, e.ID, strings.Join(names, ", "))
}

// errs accumulates field errors while validating.
type errs struct {
	list []FieldError
}

func (e *errs) add(path, format string, args ...any) {
	e.list = append(e.list, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (e *errs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	return &ValidationError{Errors: e.list}
}

func join(prefix, field string) string {
	if prefix == "" {
		return field
	}
	return prefix + "." + field
}

// IsDomainError reports whether err is one of the errors above (or nil):
// what a store returns as is, while anything else it meets is a storage
// failure to wrap in ErrUnavailable.
func IsDomainError(err error) bool {
	var ve *ValidationError
	var ce *ConflictError
	var se *SafetyError
	var st *StateError
	return err == nil || errors.As(err, &ve) || errors.As(err, &ce) || errors.As(err, &se) || errors.As(err, &st) ||
		errors.Is(err, ErrNotFound) || errors.Is(err, ErrStale) || errors.Is(err, ErrUnavailable)
}
