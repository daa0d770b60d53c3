// Evaluation runs $marks ([{run, keys}]) are marked stale: r.stale = true, r.stale_keys gains the
// keys of the documents replaced or deleted under their traces, r.stale_at = now. The runs keep
// their results: the traced nodes are retired, not deleted.
UNWIND $marks AS mark
MATCH (r:EvalRun {id: mark.run})
SET r.stale = true,
    r.stale_keys = coalesce(r.stale_keys, []) + [k IN mark.keys WHERE NOT k IN coalesce(r.stale_keys, [])],
    r.stale_at = datetime()
RETURN r.id AS run
