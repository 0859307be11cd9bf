"""Response models: what each endpoint answers, for the OpenAPI document.

The routers return ready-made responses, so these models describe the bodies (FastAPI
puts them in `/openapi.json`); they do not reshape what is sent.
"""
