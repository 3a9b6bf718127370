"""The site: a campaign's results as static HTML (``dcefuzz site``), an index of bugs,
a page per bug and the campaign's page, rendered from records and never running them."""
