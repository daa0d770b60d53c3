// The evaluation runs made on corpus $name.
MATCH (r:EvalRun {corpus: $name})
RETURN r.id AS id
