package shield_test

import (
	"context"
	"testing"
)

// BenchmarkLearned_Edit is an ordinary edit judged whole (the rules and
// the learned scorer) beside the scorer's part alone (Features): the
// scorer's share of an edit's verdict.
func BenchmarkLearned_Edit(b *testing.B) {
	s := defaultShield(b)
	a := editAction(s, "services/api/app/routes/users.py",
		"@router.get(\"/users/{user_id}\")\nasync def get_user(user_id: int, db: Session = Depends(get_db)):\n    user = db.get(User, user_id)\n    if user is None:\n        raise HTTPException(status_code=404)\n    return user",
		"@router.get(\"/users/{user_id}\")\nasync def get_user(user_id: int, db: Session = Depends(get_db), me: User = Depends(current_user)):\n    user = db.get(User, user_id)\n    if user is None or user.org_id != me.org_id:\n        raise HTTPException(status_code=404)\n    return user")
	b.Run("evaluate", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.Evaluate(context.Background(), a)
		}
	})
	b.Run("features", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.Features(a)
		}
	})
}
