// Package plan turns a query as the command line states it into answers:
// a [Request] is compiled by [Compile] into a [Plan], every CEL expression
// compiled (package indexers) and every flag checked before any contact
// with the cluster; [Plan.Fill] then fills the [Caches] the plan answers
// from, and [Plan.Execute], [Plan.ExecuteWatch] and [Plan.DescribeIndexes]
// answer from them.
//
// Fill is the one way caches are filled for answers, whoever reads them (a
// one-shot query, query --watch, a watch of events, the interactive
// session, a query server): it resolves the resources, checks the
// expressions against their OpenAPI schemas, creates the informers of
// package factory with their indexes (metadata-only or pruned ones when
// nothing reads more), adds informers for the resources that get() and
// byIndex() read, starts them and waits for their caches, all under one
// deadline ([Request.SyncTimeout]). [FillOptions] say what differs for a
// stream of events.
//
// A [Config] file names indexes per resource. [Plan.With] and [Plan.From]
// make the plans of later queries that answer from caches already filled.
//
//	Request ──Compile──▶ Plan ──Fill──▶ Caches ──answer──▶ query.RunAll ──▶ Plan.Print
//
// The package sits between the engine (package query, which it uses to
// evaluate and print) and the commands; it must not import query/watch,
// query/interactive or queryserver, which are built on it.
package plan
