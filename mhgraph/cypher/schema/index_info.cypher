// Existing index by name: its type, state, options and indexed properties.
SHOW INDEXES YIELD name, type, state, options, properties, labelsOrTypes
WHERE name = $name
RETURN name, type, state, options, properties, labelsOrTypes
