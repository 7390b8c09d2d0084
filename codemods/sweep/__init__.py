"""The final sweep: what is still there after every other rule ran."""
