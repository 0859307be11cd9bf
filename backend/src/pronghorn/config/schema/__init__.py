"""The config file's schema: AppConfig (app.py) and one module per family of sections."""
