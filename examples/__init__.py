"""Orchestrator integrations of the Exception Desk (see docs/integrating.md)."""
