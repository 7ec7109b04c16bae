"""dcnlab controller: algorithms that turn a fabric into switch state, and the switch runtime."""
