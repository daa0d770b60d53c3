// Of the runs $ids, those marked stale, with the keys of the documents changed since they ran.
MATCH (r:EvalRun) WHERE r.id IN $ids AND r.stale
RETURN r.id AS id, r.stale_keys AS keys
