// The stored evaluation runs, newest first.
MATCH (r:EvalRun)
RETURN r.id AS id, r.method AS method, r.corpus AS corpus, r.started_at AS started_at, r.questions AS questions,
       r.hits_at_10 AS hits_at_10, r.mrr_at_10 AS mrr_at_10, coalesce(r.stale, false) AS stale,
       coalesce(r.stale_keys, []) AS stale_keys
ORDER BY r.started_at DESC
