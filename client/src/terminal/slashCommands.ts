/** The interactive session's commands, as both `--help` and `/help` list them. */
export const SLASH_COMMANDS = `  /add PATH[:START-END]           attach a file (or its lines) to your next message; @PATH in a message does too
  /edit [TEXT]                    write your question in $VISUAL or $EDITOR (starting from TEXT); sent when saved
  /promote [stdout | file PATH]   turn the discussion into a coding task; review, edit, hand it off
  /list [all]                     discussions of this folder (or of every folder)
  /resume ID                      switch to a saved discussion (an id prefix will do)
  /model NAME                     continue this discussion with another model ("auto" clears)
  /models                         the models the endpoint offers
  /endpoint [URL [$KEY_VARIABLE]] show or change the endpoint; the key is read from the variable named
  /usage                          tokens used by the last turn and by the whole discussion
  /export [FILE]                  this discussion as Markdown, on stdout or into FILE
  /decisions                      the decision log: constraints, rejected alternatives, open and resolved questions
  /review [BASE]                  check what changed since the hand-off (or BASE) against the task; /promote then hands back its follow-up
  /new                            start a new discussion of the same folder
  /close                          close this discussion (it stays saved) and quit
  /help                           these commands`;
