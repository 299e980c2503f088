-- What per-session instances of an upstream listed that its tool pins do
-- not cover (issues 16, 17): a JSON object of tools, prompts and resource
-- templates, kept with the capability cache for a person to review; NULL
-- when there are none.

ALTER TABLE capabilities ADD COLUMN variants TEXT;
