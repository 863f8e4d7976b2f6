"""The command line: argparse front end, --config files, the demo.

Nothing in the package imports this subpackage; it goes through the front
door (`audit.api`) like any library user.
"""
