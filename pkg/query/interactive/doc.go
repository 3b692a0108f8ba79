// Package interactive answers queries typed one line at a time from caches
// filled once (kubectl informer query -i): a [Session] holds a plan of
// package plan whose caches hold whole objects, and each line edits the
// query (a CEL predicate, or a command such as :sort, :by or :index) and
// prints the new answer from the same caches. [Session.Complete] completes
// commands, index names and values, output formats and the field names of
// the cached objects.
//
// It is built on package plan and the engine (package query); nothing in
// pkg imports it, and it must not import query/watch or queryserver.
package interactive
