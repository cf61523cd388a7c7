"""The code Dynamo wrote: the template's side of a run that asked for it (`held_report`), the
second child's run under depyf (`depyf_rerun`), and the parser of what depyf dumps (`depyf_dump`)."""
