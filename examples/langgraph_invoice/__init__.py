"""A real LangGraph workflow that pauses at a conflict, files a case with the desk and
resumes from its checkpoint with the human's decision, exactly once. See README.md."""
