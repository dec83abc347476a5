// placeholder until the shared chat UI is on main
