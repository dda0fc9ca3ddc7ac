"""`gatewatch doctor`: one line per check of the environment, worst status as exit code.

Modules: report (results and rendering), runner (the list of checks), environment, state and
integrations (the checks), qt_libs and qt_probe (run on their own, by the installer and doctor).
"""
