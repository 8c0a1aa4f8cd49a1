"""srb_tui.scoring"""
