// Every stored evaluation run, newest first.
MATCH (r:EvalRun)
RETURN r.id AS run, r.method AS method, r.corpus AS corpus, r.started_at AS started, r.questions AS questions,
       r.hits_at_10 AS `Hits@10`, r.mrr_at_10 AS `MRR@10`
ORDER BY started DESC
