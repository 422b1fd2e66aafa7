"""The service's own web page: Jinja2 templates, a stylesheet, a small script, and the form builder."""
