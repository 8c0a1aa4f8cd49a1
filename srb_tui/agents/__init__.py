"""srb_tui.agents"""
